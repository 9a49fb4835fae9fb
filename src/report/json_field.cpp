#include "report/json_field.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace hb {

namespace {

// What a value is, for "expected X, found Y" (a short string is quoted, so a user sees it).
std::string describe(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::boolean: return v.get<bool>() ? "true" : "false";
        case nlohmann::json::value_t::string: {
            const auto& s = v.get_ref<const std::string&>();
            return s.size() <= 40 ? "the string \"" + s + "\"" : "a string";
        }
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::number_float: return "the number " + v.dump();
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned: return "the integer " + v.dump();
        default: return "a value of another kind";
    }
}

}  // namespace

void JsonField::fail(const std::string& problem) const {
    throw Error(origin_ + ": " + (path_.empty() ? "the top level" : path_) + ": " + problem);
}

void JsonField::expected(const char* what) const { fail(std::string("expected ") + what + ", found " + describe(*value_)); }

bool JsonField::has(const std::string& key) const { return value_->is_object() && value_->contains(key); }

JsonField JsonField::operator[](const std::string& key) const {
    if (!value_->is_object()) expected("an object");
    const auto it = value_->find(key);
    const std::string path = path_.empty() ? key : path_ + "." + key;
    if (it == value_->end()) throw Error(origin_ + ": " + path + ": missing");
    return JsonField(*it, path, origin_);
}

std::vector<JsonField> JsonField::elements() const {
    if (!value_->is_array()) expected("an array");
    std::vector<JsonField> out;
    out.reserve(value_->size());
    for (std::size_t k = 0; k < value_->size(); ++k)
        out.emplace_back((*value_)[k], path_ + "[" + std::to_string(k) + "]", origin_);
    return out;
}

std::vector<std::pair<std::string, JsonField>> JsonField::members() const {
    if (!value_->is_object()) expected("an object");
    std::vector<std::pair<std::string, JsonField>> out;
    for (auto it = value_->begin(); it != value_->end(); ++it)
        out.emplace_back(it.key(), JsonField(it.value(), path_.empty() ? it.key() : path_ + "." + it.key(), origin_));
    return out;
}

std::string JsonField::text() const {
    if (!value_->is_string()) expected("a string");
    return value_->get<std::string>();
}

std::string JsonField::text_or_empty() const { return value_->is_null() ? std::string() : text(); }

bool JsonField::flag() const {
    if (!value_->is_boolean()) expected("true or false");
    return value_->get<bool>();
}

std::int64_t JsonField::integer() const {
    if (value_->is_number_unsigned()) {
        if (value_->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            expected("an integer that fits in 64 signed bits");
        return static_cast<std::int64_t>(value_->get<std::uint64_t>());
    }
    if (!value_->is_number_integer()) expected("an integer");
    return value_->get<std::int64_t>();
}

std::uint64_t JsonField::unsigned_integer() const {
    if (!value_->is_number_unsigned()) expected("a non-negative integer");
    return value_->get<std::uint64_t>();
}

double JsonField::real() const { return real_or(std::numeric_limits<double>::quiet_NaN()); }

double JsonField::real_or(double if_null) const {
    if (value_->is_null()) return if_null;
    if (!value_->is_number()) expected("a number or null");
    return value_->get<double>();
}

double JsonField::real_or_special() const {
    if (value_->is_number()) return value_->get<double>();
    if (value_->is_string()) {
        const auto& s = value_->get_ref<const std::string&>();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    expected("a number, \"nan\", \"inf\" or \"-inf\"");
}

std::int64_t JsonField::index_or_none() const {
    if (value_->is_null()) return -1;
    if (!value_->is_number_integer()) expected("an index (a non-negative integer) or null");
    const std::int64_t i = integer();
    if (i < 0) expected("an index (a non-negative integer) or null");
    return i;
}

}  // namespace hb
