// CSV and JSON writers with correct escaping, for --format csv|json.
//
// Layer: analysis/reports/. Writes to a std::string; no trace types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace libprof::analysis {

// One CSV field quoted per RFC 4180 when it holds a comma, quote, CR or LF.
std::string CsvField(std::string_view value);
// A CSV line (fields joined by commas, terminated by "\n").
std::string CsvLine(const std::vector<std::string>& fields);

// JSON string literal with quotes; control characters escaped, invalid UTF-8 bytes replaced by
// U+FFFD so that the output always parses.
std::string JsonString(std::string_view value);

// Streams pretty-printed JSON (two-space indentation, one member per line, short arrays of
// scalars on one line). Keys and values alternate inside objects; commas are placed for you.
class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);  // finite: up to 6 significant decimals; else null
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // Key(k) followed by the value.
  JsonWriter& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, uint64_t value) { return Key(key).Uint(value); }
  JsonWriter& Field(std::string_view key, uint32_t value) { return Key(key).Uint(value); }
  JsonWriter& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, double value) { return Key(key).Double(value); }
  JsonWriter& Field(std::string_view key, bool value) { return Key(key).Bool(value); }

  const std::string& str() const { return out_; }

 private:
  void BeforeValue();
  void Newline();
  std::string out_;
  struct Level {
    bool array = false;
    bool empty = true;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace libprof::analysis
