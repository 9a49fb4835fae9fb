// One value of a JSON document together with where it sits ("cases[3].candidate_timing.count")
// and which file it came from, so that a reader that finds a field missing or of the wrong type
// says exactly which one (hb::Error, exit 2). Used to read results files back (results_reader).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hb {

class JsonField {
  public:
    JsonField(const nlohmann::json& value, std::string path, std::string origin)
        : value_(&value), path_(std::move(path)), origin_(std::move(origin)) {}

    // Members of an object: missing ones and non-objects are errors naming the field.
    JsonField operator[](const std::string& key) const;
    bool has(const std::string& key) const;
    // Elements of an array, and the members of an object in key order.
    std::vector<JsonField> elements() const;
    std::vector<std::pair<std::string, JsonField>> members() const;

    bool is_null() const { return value_->is_null(); }
    std::string text() const;
    std::string text_or_empty() const;  // null reads as ""
    bool flag() const;
    std::int64_t integer() const;
    std::uint64_t unsigned_integer() const;
    // A number; null reads as NaN (the results writer writes non-finite numbers as null).
    double real() const;
    // A number, or null meaning "not there" (e.g. an untimed case's t_cand_us).
    double real_or(double if_null) const;
    // The precision block's numbers: finite, or "nan", "inf", "-inf".
    double real_or_special() const;
    // An element index, null meaning none (-1).
    std::int64_t index_or_none() const;

    const std::string& path() const { return path_; }
    const std::string& origin() const { return origin_; }
    // Throws hb::Error "<origin>: <path>: <problem>".
    [[noreturn]] void fail(const std::string& problem) const;

  private:
    [[noreturn]] void expected(const char* what) const;
    const nlohmann::json* value_;
    std::string path_;
    std::string origin_;
};

}  // namespace hb
