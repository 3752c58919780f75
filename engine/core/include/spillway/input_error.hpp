#pragma once
// One error type for every input Spillway reads (policy, trace, scenario, payload): it names
// the file, the line and the field, so the message reads `file:line: field: what is wrong`.
#include <stdexcept>
#include <string>
#include <string_view>

namespace spillway {

// Input echoed to a terminal is written out, not obeyed: a control character (an escape
// sequence that retitles or recolours the terminal, a carriage return that hides the line)
// becomes \xNN. Newlines and tabs stay: messages may be laid out with them.
inline std::string& appendPrintable(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      out.append("\\x");
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  return appendPrintable(out, text);
}

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, std::string field, std::string what)
      : std::runtime_error(format(file, line, field, what)),
        file_(std::move(file)),
        line_(line),
        field_(std::move(field)),
        detail_(std::move(what)) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }  // 1-based; 0 when unknown
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  static std::string format(const std::string& file, long line, const std::string& field,
                            const std::string& what) {
    // Built with append (not operator+ chains): GCC 12 warns falsely (-Wrestrict) on those.
    std::string s;
    s.reserve(file.size() + field.size() + what.size() + 24);
    appendPrintable(s, file);
    if (line > 0) s.append(":").append(std::to_string(line));
    s.append(": ");
    if (!field.empty()) appendPrintable(s, field).append(": ");
    appendPrintable(s, what);
    return s;
  }
  std::string file_;
  long line_;
  std::string field_;
  std::string detail_;
};

}  // namespace spillway
