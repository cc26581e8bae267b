#pragma once
// A statement's parameters in the arrays libpq takes (postgres.cpp, postgres_pipeline.cpp).

#include <exactly/common/postgres.hpp>

#include <vector>

namespace exactly::pg {

// A statement's parameters as libpq takes them (pointing into `params`, which must outlive it).
struct libpq_params {
  explicit libpq_params(const std::vector<param>& params)
      : values(params.size()), lengths(params.size()), formats(params.size()) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      values[i] = params[i].null ? nullptr : params[i].text.data();
      lengths[i] = static_cast<int>(params[i].text.size());
      formats[i] = params[i].binary ? 1 : 0;
    }
  }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

}  // namespace exactly::pg
