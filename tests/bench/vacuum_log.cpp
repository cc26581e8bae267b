// Autovacuum's passes read from a PostgreSQL log (vacuum_log.hpp).
#include "vacuum_log.hpp"

#include <cinttypes>
#include <cstdio>

namespace exactly::bench {

std::vector<vacuum_pass> read_vacuum_passes(std::istream& log, const std::string& schema,
                                            const std::string& table) {
  // 2026-11-28 19:46:45.053 UTC [6012] LOG:  automatic vacuum of table "db.schema.table": ...
  // (or "automatic aggressive vacuum", "... to prevent wraparound of table"; never "analyze")
  const std::string opening = "LOG:  automatic ";
  const std::string name = " of table \"";
  const std::string qualified = "." + schema + "." + table + "\":";
  std::vector<vacuum_pass> passes;
  bool in_pass = false;
  for (std::string line; std::getline(log, line);) {
    if (line.empty() || line[0] != '\t') {
      const auto at = line.find(opening);
      const auto of = at == std::string::npos ? at : line.find(name, at);
      const auto vacuum = at == std::string::npos ? at : line.find("vacuum", at);
      in_pass =
          of != std::string::npos && vacuum < of && line.find(qualified, of) != std::string::npos;
      if (in_pass)
        passes.push_back({line.substr(0, line.find(" [")), {}});
      continue;
    }
    if (!in_pass)
      continue;
    // \tindex "name": pages: 106 in total, 47 newly deleted, 93 currently deleted, 93 reusable
    const std::string lead = "\tindex \"";
    const auto close = line.find("\": pages: ");
    if (line.rfind(lead, 0) != 0 || close == std::string::npos)
      continue;
    index_after_pass p;
    if (std::sscanf(line.c_str() + close + 10,
                    "%" SCNd64 " in total, %" SCNd64 " newly deleted, %" SCNd64
                    " currently deleted, %" SCNd64 " reusable",
                    &p.pages, &p.newly_deleted, &p.currently_deleted, &p.reusable) == 4) {
      passes.back().indexes[line.substr(lead.size(), close - lead.size())] = p;
    }
  }
  return passes;
}

}  // namespace exactly::bench
