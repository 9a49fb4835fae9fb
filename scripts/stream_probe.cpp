// The machine's state for scripts/benchmark.sh: the memory bandwidth two OpenMP threads get
// on a streaming loop, y = 1.5 x + 0.5 over 16 MiB of float32 into another 16 MiB, both
// evicted from the caches before each round; the median GB/s (bytes read plus written) of the
// rounds in `seconds` (default 1). A shared machine does not keep one state: on a 2-vCPU AMD
// EPYC guest this read 50 to 54 GB/s, then 20.5 GB/s for minutes, from one second to the
// next, and memory-bound kernels followed it (README, "Developer notes"). Printed next to
// every figure, it says which state a figure was measured in.
//
//   g++ -O2 -fopenmp scripts/stream_probe.cpp -o stream_probe && ./stream_probe [seconds]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    constexpr std::size_t n = (std::size_t{16} << 20) / sizeof(float);
    std::vector<float> x(n, 1.0f), y(n, 0.0f);
    std::vector<double> rounds;
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
        Clock::time_point t0;
        double round = 0;
#pragma omp parallel num_threads(2)
        {
            const std::size_t me = static_cast<std::size_t>(omp_get_thread_num());
            const std::size_t team = static_cast<std::size_t>(omp_get_num_threads());
            const std::size_t begin = n * me / team, end = n * (me + 1) / team;
            for (std::size_t i = begin; i < end; i += 16) {
                _mm_clflush(&x[i]);
                _mm_clflush(&y[i]);
            }
            _mm_mfence();
#pragma omp barrier
#pragma omp master
            t0 = Clock::now();
#pragma omp barrier
            for (std::size_t i = begin; i < end; ++i) y[i] = 1.5f * x[i] + 0.5f;
#pragma omp barrier
#pragma omp master
            round = std::chrono::duration<double>(Clock::now() - t0).count();
        }
        rounds.push_back(round);
    }
    std::nth_element(rounds.begin(), rounds.begin() + static_cast<std::ptrdiff_t>(rounds.size() / 2), rounds.end());
    std::printf("%.1f\n", 2.0 * n * sizeof(float) / rounds[rounds.size() / 2] / 1e9);
    return 0;
}
