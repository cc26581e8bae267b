#pragma once
// Replays the protocol's test vectors (proto-spec/vectors, §11) against a target.

#include "report.hpp"
#include "target.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace exactly::conformance {

// Runs one case `c` of a vector file against `t`; every check that fails is one failure.
case_result run_vector_case(const nlohmann::json& c, target& t, const run_options& o);

// The *.json files of `dir`, sorted. Throws std::runtime_error when `dir` is not a directory.
std::vector<std::filesystem::path> vector_files(const std::filesystem::path& dir);

// The names of the cases of `file` as run_vector_file names them.
std::vector<std::string> vector_case_names(const std::filesystem::path& file);

// Every case of the vector file `file`, each on its own target from `make`; cases are named
// "<file stem>/<case name>"; with `wanted`, only the cases whose name it accepts. A case that is
// malformed (an unknown key, a wrong type) or throws fails with the reason; a file that does not
// parse is one failing entry "<file stem>/(file)".
std::vector<case_result> run_vector_file(
    const std::filesystem::path& file, const target_factory& make, const run_options& o,
    const std::function<bool(const std::string&)>& wanted = {});

}  // namespace exactly::conformance
