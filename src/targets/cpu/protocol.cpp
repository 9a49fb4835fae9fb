#include "targets/cpu/protocol.hpp"

#include <poll.h>
#include <unistd.h>

#include <bit>
#include <cerrno>

namespace hb::protocol {

CaseLayout make_layout(const std::vector<ArgSpec>& inputs, const std::vector<ArgSpec>& outputs) {
    CaseLayout layout;
    std::size_t offset = 0;
    auto place = [&](const std::vector<ArgSpec>& specs, std::vector<ArgLayout>& out) {
        for (const auto& s : specs) {
            ArgLayout a{s.name, s.is_list, s.present, {}, s.variable_length};
            for (const auto& t : s.tensors) {
                a.tensors.push_back({t, offset});
                offset += (t.bytes() + 63) / 64 * 64;
            }
            out.push_back(std::move(a));
        }
    };
    place(inputs, layout.inputs);
    place(outputs, layout.outputs);
    layout.total_bytes = std::max<std::size_t>(offset, 64);
    return layout;
}

namespace {
nlohmann::json args_to_json(const std::vector<ArgLayout>& args) {
    auto arr = nlohmann::json::array();
    for (const auto& a : args) {
        auto tensors = nlohmann::json::array();
        for (const auto& t : a.tensors)
            tensors.push_back({{"dtype", static_cast<int>(t.spec.dtype)}, {"shape", t.spec.shape}, {"offset", t.offset}});
        arr.push_back({{"name", a.name}, {"is_list", a.is_list}, {"present", a.present}, {"tensors", tensors},
                       {"variable_length", a.variable_length}});
    }
    return arr;
}
std::vector<ArgLayout> args_from_json(const nlohmann::json& arr) {
    std::vector<ArgLayout> out;
    for (const auto& a : arr) {
        ArgLayout l{a.at("name").get<std::string>(), a.at("is_list").get<bool>(), a.at("present").get<bool>(), {},
                    a.value("variable_length", false)};
        for (const auto& t : a.at("tensors"))
            l.tensors.push_back({TensorSpec{static_cast<DType>(t.at("dtype").get<int>()), t.at("shape").get<Shape>()},
                                 t.at("offset").get<std::size_t>()});
        out.push_back(std::move(l));
    }
    return out;
}
}  // namespace

nlohmann::json to_json(const CaseLayout& layout) {
    return {{"inputs", args_to_json(layout.inputs)}, {"outputs", args_to_json(layout.outputs)},
            {"total_bytes", layout.total_bytes}};
}

CaseLayout layout_from_json(const nlohmann::json& j) {
    return CaseLayout{args_from_json(j.at("inputs")), args_from_json(j.at("outputs")),
                      j.at("total_bytes").get<std::size_t>()};
}

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
