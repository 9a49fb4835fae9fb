#!/usr/bin/env bash
# Fuzzes the .npy reader with libFuzzer (clang, Debian's libclang-rt dev package) under
# AddressSanitizer and UBSan. Not part of the CMake build or CI; run it by hand:
#   tests/fuzz/fuzz_npy.sh [seconds]        (default 180)
# Crashing inputs land in $WORK/crashes; keep each one under tests/data/npy/ so that
# test_npy.cpp (Npy.FuzzRegressionInputs) replays it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-180}"
WORK="${WORK:-/tmp/hb-fuzz-npy}"
CXX="${CXX:-clang++}"
mkdir -p "$WORK/corpus" "$WORK/crashes"

"$CXX" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/src" -I"$root/include" \
    "$here/fuzz_npy.cpp" "$root/src/core/npy.cpp" "$root/src/core/dtype.cpp" "$root/src/core/shape.cpp" \
    -o "$WORK/fuzz_npy"

# Seeds: valid files of several dtypes and versions, plus the regression inputs.
seed() { printf "$2" > "$WORK/corpus/$1"; }
pad_v1() {  # name, dict, data (printf escapes): header padded to 64 bytes with format 1.0
    local dict="$2" len
    while (( (10 + ${#dict} + 1) % 64 != 0 )); do dict+=" "; done
    len=$(( ${#dict} + 1 ))
    printf '\x93NUMPY\x01\x00'"$(printf '\\x%02x\\x%02x' $((len & 255)) $((len >> 8)))"'%s\n'"$3" "$dict" > "$WORK/corpus/$1"
}
pad_v1 f4 "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" '\x00\x00\x80\x3f\x00\x00\x00\x40'
pad_v1 bf16 "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1), } # hapbench_dtype: bfloat16" '\x80\x3f'
pad_v1 bf16key "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), 'hapbench_dtype': 'bfloat16', }" '\x80\x3f'
pad_v1 i8 "{'descr': '|i1', 'fortran_order': False, 'shape': (), }" '\x05'
pad_v1 b1 "{'descr': '|b1', 'fortran_order': False, 'shape': (3, 0), }" ''
seed v2 '\x93NUMPY\x02\x00\x38\x00\x00\x00{"descr": "<f8", "fortran_order": False, "shape": (1,)}\n\x00\x00\x00\x00\x00\x00\xf0\x3f'
if compgen -G "$root/tests/data/npy/*" > /dev/null; then cp "$root"/tests/data/npy/* "$WORK/corpus/"; fi

"$WORK/fuzz_npy" "$WORK/corpus" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$WORK/crashes/" 2>&1 | tee "$WORK/fuzz.log" | grep -E "^#[0-9]+.*(DONE|pulse)|stat::|ERROR|artifact" || true
echo "log: $WORK/fuzz.log; crashing inputs (if any): $(ls "$WORK/crashes" | wc -l) in $WORK/crashes"
