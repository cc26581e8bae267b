// PostgreSQL's errors: SQLSTATEs packed into an error_code, and their classes.
#include <exactly/common/postgres_error.hpp>

namespace exactly::pg {
namespace {

int pack(std::string_view sqlstate) {
  int v = 0;
  for (std::size_t i = 0; i < sqlstate.size() && i < 5; ++i)
    v |= ((sqlstate[i] - '0') & 0x3F) << (6 * i);
  return v;
}

class category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "postgres"; }
  std::string message(int ev) const override {
    std::string s;
    for (int i = 0; i < 5; ++i)
      s += static_cast<char>(((ev >> (6 * i)) & 0x3F) + '0');
    return "SQLSTATE " + s;
  }
};

}  // namespace

const boost::system::error_category& postgres_category() noexcept {
  static const category_impl instance;
  return instance;
}

error::error(std::string_view sqlstate, const std::string& what, bool deferred)
    : storage_error(boost::system::error_code(pack(sqlstate), postgres_category()), what),
      sqlstate_(sqlstate),
      deferred_(deferred) {}

bool error::storage_failure() const noexcept {
  const std::string_view s = sqlstate_;
  const std::string_view cls = s.substr(0, 2);
  return cls == "08" || cls == "53" || cls == "57" || cls == "58" || cls == "40" || s == "55P03" ||
         s == "25006";
}

}  // namespace exactly::pg
