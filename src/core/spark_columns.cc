#include "core/spark_columns.h"

#include <arrow/type.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/user_text.h"
#include "core/ascii.h"

namespace mssql_cdc {
namespace {

constexpr std::string_view kForm =
    "give a comma-separated list of 'name TYPE', e.g. columns='order_id INT, status STRING, "
    "amount DECIMAL(18,2)'";

[[noreturn]] void Refuse(const std::string& what) {
  throw ConfigError("option 'columns': " + what + "; " + std::string(kForm));
}

std::string Upper(std::string_view text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The parts of the list between commas outside parentheses and back-quotes.
std::vector<std::string> SplitColumns(std::string_view ddl) {
  std::vector<std::string> parts;
  std::string part;
  int depth = 0;
  bool quoted = false;
  for (char c : ddl) {
    if (c == '`') quoted = !quoted;
    if (!quoted && c == '(') ++depth;
    if (!quoted && c == ')') --depth;
    if (!quoted && depth == 0 && c == ',') {
      parts.push_back(std::string(TrimAsciiSpace(part)));
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(std::string(TrimAsciiSpace(part)));
  return parts;
}

// "(p)" or "(p, s)" after a type name: the numbers, or Refuse.
std::vector<int> TypeArguments(const std::string& args, const std::string& column) {
  std::vector<int> out;
  if (args.empty()) return out;
  if (args.front() != '(' || args.back() != ')') {
    Refuse("column " + QuoteUserText(column) + " has a malformed type " + QuoteUserText(args));
  }
  std::string number;
  for (char c : args.substr(1, args.size() - 2) + ",") {
    if (c == ',') {
      const std::string n = std::string(TrimAsciiSpace(number));
      if (n.empty() || n.size() > 4 ||
          n.find_first_not_of("0123456789") != std::string::npos) {
        Refuse("column " + QuoteUserText(column) + " has a malformed type " + QuoteUserText(args));
      }
      out.push_back(std::stoi(n));
      number.clear();
    } else {
      number += c;
    }
  }
  return out;
}

std::shared_ptr<arrow::DataType> SparkType(const std::string& text, const std::string& column) {
  const std::size_t open = text.find('(');
  const std::string name = Upper(std::string(TrimAsciiSpace(text.substr(0, open))));
  const std::string args = open == std::string::npos ? "" : std::string(TrimAsciiSpace(text.substr(open)));
  const std::vector<int> numbers = TypeArguments(args, column);
  auto no_arguments = [&](std::shared_ptr<arrow::DataType> type) {
    if (!numbers.empty()) {
      Refuse("type " + name + " of column " + QuoteUserText(column) + " takes no arguments");
    }
    return type;
  };
  if (name == "BOOLEAN") return no_arguments(arrow::boolean());
  if (name == "TINYINT" || name == "BYTE") return no_arguments(arrow::int8());
  if (name == "SMALLINT" || name == "SHORT") return no_arguments(arrow::int16());
  if (name == "INT" || name == "INTEGER") return no_arguments(arrow::int32());
  if (name == "BIGINT" || name == "LONG") return no_arguments(arrow::int64());
  if (name == "FLOAT" || name == "REAL") return no_arguments(arrow::float32());
  if (name == "DOUBLE") return no_arguments(arrow::float64());
  if (name == "STRING") return no_arguments(arrow::utf8());
  if (name == "VARCHAR" || name == "CHAR") {
    if (numbers.size() != 1) Refuse(name + " of column " + QuoteUserText(column) + " needs a length");
    return arrow::utf8();
  }
  if (name == "BINARY") return no_arguments(arrow::binary());
  if (name == "DATE") return no_arguments(arrow::date32());
  if (name == "TIMESTAMP" || name == "TIMESTAMP_LTZ") {
    return no_arguments(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
  }
  if (name == "TIMESTAMP_NTZ") return no_arguments(arrow::timestamp(arrow::TimeUnit::MICRO));
  if (name == "DECIMAL" || name == "DEC" || name == "NUMERIC") {
    const int precision = numbers.empty() ? 10 : numbers[0];
    const int scale = numbers.size() > 1 ? numbers[1] : 0;
    if (numbers.size() > 2 || precision < 1 || precision > 38 || scale > precision) {
      Refuse("column " + QuoteUserText(column) + " has DECIMAL" + args +
             ": precision 1 to 38, scale at most the precision");
    }
    return arrow::decimal128(precision, scale);
  }
  Refuse("column " + QuoteUserText(column) + " has type " + QuoteUserText(std::string(TrimAsciiSpace(text))) +
         ", which is not a Spark type this option takes (BOOLEAN, TINYINT, SMALLINT, INT, "
         "BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, VARCHAR(n), CHAR(n), BINARY, DATE, "
         "TIMESTAMP, TIMESTAMP_NTZ)");
}

}  // namespace

arrow::FieldVector ParseSparkColumns(std::string_view ddl) {
  if (std::string(TrimAsciiSpace(ddl)).empty()) Refuse("the list is empty");
  arrow::FieldVector out;
  std::set<std::string> seen;
  for (const std::string& part : SplitColumns(ddl)) {
    if (part.empty()) Refuse("the list has an empty entry");
    std::string name;
    std::string rest;
    if (part.front() == '`') {
      const std::size_t close = part.find('`', 1);
      if (close == std::string::npos) Refuse("a back-quoted name is not closed: " + QuoteUserText(part));
      name = part.substr(1, close - 1);
      rest = std::string(TrimAsciiSpace(std::string_view(part).substr(close + 1)));
    } else {
      std::size_t end = 0;
      while (end < part.size() && !std::isspace(static_cast<unsigned char>(part[end]))) ++end;
      name = part.substr(0, end);
      rest = std::string(TrimAsciiSpace(std::string_view(part).substr(end)));
    }
    if (name.empty()) Refuse("an entry has no column name: " + QuoteUserText(part));
    if (rest.empty()) Refuse("column " + QuoteUserText(name) + " has no type");
    if (!seen.insert(Upper(name)).second) Refuse("column " + QuoteUserText(name) + " is listed twice");
    out.push_back(arrow::field(name, SparkType(rest, name)));
  }
  return out;
}

}  // namespace mssql_cdc
