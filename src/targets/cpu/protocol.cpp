#include "targets/cpu/protocol.hpp"

#include <poll.h>
#include <unistd.h>

#include <bit>
#include <cerrno>

namespace hb::protocol {

nlohmann::json attrs_to_json(const AttrMap& attrs) {
    auto obj = nlohmann::json::object();
    for (const auto& [name, v] : attrs) {
        nlohmann::json a = {{"type", static_cast<int>(v.type)}};
        switch (v.type) {
            case AttrType::none: break;
            // Floats travel as their bit pattern so NaN and infinity survive JSON.
            case AttrType::f: a["bits"] = std::bit_cast<std::uint64_t>(v.f); break;
            case AttrType::i: a["i"] = v.i; break;
            case AttrType::b: a["b"] = v.b; break;
            case AttrType::s: a["s"] = v.s; break;
            case AttrType::int_list: a["ints"] = v.ints; break;
            case AttrType::float_list: {
                std::vector<std::uint64_t> bits;
                for (double d : v.floats) bits.push_back(std::bit_cast<std::uint64_t>(d));
                a["float_bits"] = bits;
                break;
            }
        }
        obj[name] = a;
    }
    return obj;
}

AttrMap attrs_from_json(const nlohmann::json& j) {
    AttrMap attrs;
    for (const auto& [name, a] : j.items()) {
        AttrValue v;
        v.type = static_cast<AttrType>(a.at("type").get<int>());
        switch (v.type) {
            case AttrType::none: break;
            case AttrType::f: v.f = std::bit_cast<double>(a.at("bits").get<std::uint64_t>()); break;
            case AttrType::i: v.i = a.at("i").get<std::int64_t>(); break;
            case AttrType::b: v.b = a.at("b").get<bool>(); break;
            case AttrType::s: v.s = a.at("s").get<std::string>(); break;
            case AttrType::int_list: v.ints = a.at("ints").get<std::vector<std::int64_t>>(); break;
            case AttrType::float_list:
                for (auto bits : a.at("float_bits").get<std::vector<std::uint64_t>>()) v.floats.push_back(std::bit_cast<double>(bits));
                break;
        }
        attrs[name] = v;
    }
    return attrs;
}

bool write_message(int fd, const nlohmann::json& message) {
    std::string line = message.dump() + "\n";
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<std::string> LineReader::read_line() {
    bool timed_out = false;
    return read_line(-1, timed_out);
}

std::optional<std::string> LineReader::read_line(int timeout_ms, bool& timed_out) {
    timed_out = false;
    for (;;) {
        const auto newline = buffer_.find('\n');
        if (newline != std::string::npos) {
            std::string line = buffer_.substr(0, newline);
            buffer_.erase(0, newline + 1);
            return line;
        }
        if (buffer_.size() > max_line_bytes) {
            std::string line = buffer_.substr(0, max_line_bytes);
            buffer_.clear();
            return line;
        }
        if (timeout_ms >= 0) {
            pollfd pfd{fd_, POLLIN, 0};
            const int ready = ::poll(&pfd, 1, timeout_ms);
            if (ready < 0 && errno == EINTR) continue;
            if (ready == 0) {
                timed_out = true;
                return std::nullopt;
            }
        }
        char chunk[65536];
        const ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return std::nullopt;
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
}

}  // namespace hb::protocol
