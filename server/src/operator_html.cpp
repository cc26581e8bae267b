// The operator page as HTML (see operator_html.hpp).
#include "operator_html.hpp"

#include <ctime>
#include <sstream>

namespace exactly::server {
namespace {

constexpr std::string_view style =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.4em 0}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "td.err{color:#a00;white-space:pre-wrap;max-width:40em;word-break:break-word}"
    "td.t{white-space:nowrap}code{font-size:.95em}.more{color:#555;font-style:italic}.empty{color:#"
    "777}"
    "form{margin:1em 0}";

constexpr inspect::state all_states[] = {inspect::state::staged, inspect::state::executed,
                                         inspect::state::tombstone};

std::string state_name(inspect::state s) {
  return std::string(inspect::to_string(s));
}

// `ms` since the epoch as "YYYY-MM-DD HH:MM:SSZ".
std::string utc(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (!gmtime_r(&t, &tm))
    return std::to_string(ms);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

// A duration of `seconds` as "2d 3h", "3h 4m", "4m 5s" or "5s" ("-" before a negative one).
std::string duration(std::int64_t seconds) {
  if (seconds < 0)
    return "-" + duration(-seconds);
  const std::int64_t d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60,
                     s = seconds % 60;
  if (d > 0)
    return std::to_string(d) + "d " + std::to_string(h) + "h";
  if (h > 0)
    return std::to_string(h) + "h " + std::to_string(m) + "m";
  if (m > 0)
    return std::to_string(m) + "m " + std::to_string(s) + "s";
  return std::to_string(s) + "s";
}

std::string age(std::int64_t now_ms, std::int64_t since_ms) {
  return duration((now_ms - since_ms) / 1000);
}

class page {
 public:
  explicit page(const operator_view& v) : v_(v) {}

  std::string render() {
    o_ << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"robots\" content=\"noindex\">"
          "<title>exactly operator page</title><style>"
       << style << "</style></head><body>\n<h1>exactly: operator page</h1>\n<p>Read at <time>"
       << utc(v_.now_ms) << "</time> (server clock), up <span id=\"uptime\">"
       << duration(v_.uptime.count()) << "</span>. Read-only; reload to refresh.</p>\n";
    glance();
    filter_form();
    for (const interaction_listing& l : v_.interactions)
      interactions(l);
    outbox();
    dead_letters();
    o_ << "</body></html>\n";
    return o_.str();
  }

 private:
  void glance() {
    const storage_figures& f = v_.figures;
    o_ << "<h2>At a glance</h2>\n<table id=\"glance\"><tbody>\n";
    figure("staged", "Interactions staged (in flight)", f.rows.staged);
    figure("executed", "Interactions executed (responses kept)", f.rows.executed);
    figure("tombstone", "Tombstones", f.rows.tombstone);
    figure("outbox", "Outbox messages pending", f.outbox_pending);
    figure("dead-letters", "Dead letters", f.dead_letters);
    figure("executions", "Executions since start", f.stats.executions);
    figure("replays", "Replays since start", f.stats.replays);
    figure("logic-failures", "Business logic failures since start", f.stats.logic_failures);
    figure("delivered", "Messages delivered since start", f.stats.messages_delivered);
    figure("dead-lettered", "Messages dead-lettered since start", f.stats.messages_dead_lettered);
    o_ << "<tr><th>Uptime</th><td class=\"n\" data-figure=\"uptime-seconds\">" << v_.uptime.count()
       << " s</td></tr>\n</tbody></table>\n";
  }

  void figure(const char* key, const char* label, std::int64_t n) {
    o_ << "<tr><th>" << label << "</th><td class=\"n\" data-figure=\"" << key << "\">" << n
       << "</td></tr>\n";
  }

  void filter_form() {
    const std::string current = v_.filter.state ? state_name(*v_.filter.state) : "";
    o_ << "<form method=\"get\" action=\"/_exactly/operator\">Interactions: <select "
          "name=\"state\"><option value=\"\">staged and executed</option>";
    for (const inspect::state s : all_states) {
      o_ << "<option" << (current == state_name(s) ? " selected" : "") << ">" << state_name(s)
         << "</option>";
    }
    o_ << "</select> owner: <input name=\"owner\" value=\"" << html_escaped(v_.filter.owner)
       << "\"> <button>Show</button>";
    if (v_.filter.state || !v_.filter.owner.empty())
      o_ << " <a href=\"/_exactly/operator\">clear</a>";
    o_ << "</form>\n";
  }

  void interactions(const interaction_listing& l) {
    const bool staged = l.state == inspect::state::staged;
    const bool executed = l.state == inspect::state::executed;
    const std::string name = state_name(l.state);
    o_ << "<section id=\"" << name << "\"><h2>";
    if (staged)
      o_ << "In flight (staged), oldest first";
    else if (executed)
      o_ << "Recently executed, newest first";
    else
      o_ << "Tombstones, newest first";
    if (!v_.filter.owner.empty())
      o_ << ", owner <code>" << html_escaped(v_.filter.owner) << "</code>";
    o_ << ": <span class=\"total\">" << l.list.total << "</span></h2>\n";
    if (l.list.rows.empty()) {
      o_ << "<p class=\"empty\">none</p></section>\n";
      return;
    }
    o_ << "<table><thead><tr><th>Route</th><th>Id</th><th>Owner</th><th>Since</th><th>Age</th>"
       << (executed ? "<th>Status</th>"
           : staged ? ""
                    : "<th>Reason</th>")
       << "</tr></thead><tbody>\n";
    for (const inspect::interaction_summary& r : l.list.rows) {
      o_ << "<tr data-id=\"" << html_escaped(r.id) << "\"><td><code>" << html_escaped(r.route)
         << "</code></td><td><code>" << html_escaped(r.id)
         << "</code></td><td><a href=\"?owner=" << html_escaped(query_encoded(r.owner))
         << (v_.filter.state ? std::string("&amp;state=") + name : std::string()) << "\">"
         << html_escaped(r.owner) << "</a></td><td class=\"t\">" << utc(r.state_since_ms)
         << "</td><td class=\"n\">" << age(v_.now_ms, r.state_since_ms) << "</td>";
      if (executed) {
        o_ << "<td class=\"n\">"
           << (r.response_status ? std::to_string(*r.response_status) : std::string()) << "</td>";
      } else if (!staged) {
        o_ << "<td>" << html_escaped(r.tombstone_reason.value_or("")) << "</td>";
      }
      o_ << "</tr>\n";
    }
    o_ << "</tbody></table>\n";
    more(l.list.total, l.list.rows.size());
    o_ << "</section>\n";
  }

  void outbox() {
    o_ << "<section id=\"outbox\"><h2>Outbox, oldest first: <span class=\"total\">"
       << v_.outbox.total << "</span></h2>\n";
    if (v_.outbox.rows.empty()) {
      o_ << "<p class=\"empty\">empty</p></section>\n";
      return;
    }
    o_ << "<table><thead><tr><th>Seq</th><th>Type</th><th>Source</th><th>Created</th>"
          "<th>Age</th><th>Attempts</th><th>Next attempt</th><th>Last error</th></tr></thead>"
          "<tbody>\n";
    for (const inspect::outbox_entry& r : v_.outbox.rows) {
      o_ << "<tr data-seq=\"" << r.seq << "\"><td class=\"n\">" << r.seq << "</td><td><code>"
         << html_escaped(r.type) << "</code></td><td><code>" << html_escaped(r.source)
         << "</code></td><td class=\"t\">" << utc(r.created_ms) << "</td><td class=\"n\">"
         << age(v_.now_ms, r.created_ms) << "</td><td class=\"n\">" << r.attempts
         << "</td><td class=\"t\">"
         << (r.next_attempt_ms <= v_.now_ms ? std::string("due") : utc(r.next_attempt_ms))
         << "</td><td class=\"err\">" << html_escaped(r.last_error.value_or("")) << "</td></tr>\n";
    }
    o_ << "</tbody></table>\n";
    more(v_.outbox.total, v_.outbox.rows.size());
    o_ << "</section>\n";
  }

  void dead_letters() {
    o_ << "<section id=\"dead-letters\"><h2>Dead letters, oldest first: <span class=\"total\">"
       << v_.dead_letters.total << "</span></h2>\n";
    if (v_.dead_letters.rows.empty()) {
      o_ << "<p class=\"empty\">none</p></section>\n";
      return;
    }
    o_ << "<table><thead><tr><th>Seq</th><th>Type</th><th>Source</th><th>Created</th>"
          "<th>Failed</th><th>Attempts</th><th>Error</th></tr></thead><tbody>\n";
    for (const inspect::dead_letter& r : v_.dead_letters.rows) {
      o_ << "<tr data-seq=\"" << r.seq << "\"><td class=\"n\">" << r.seq << "</td><td><code>"
         << html_escaped(r.type) << "</code></td><td><code>" << html_escaped(r.source)
         << "</code></td><td class=\"t\">" << utc(r.created_ms) << "</td><td class=\"t\">"
         << utc(r.failed_ms) << "</td><td class=\"n\">" << r.attempts << "</td><td class=\"err\">"
         << html_escaped(r.error) << "</td></tr>\n";
    }
    o_ << "</tbody></table>\n";
    more(v_.dead_letters.total, v_.dead_letters.rows.size());
    o_ << "</section>\n";
  }

  // "N more" under a table that shows `shown` of `total` rows.
  void more(std::int64_t total, std::size_t shown) {
    const std::int64_t rest = total - static_cast<std::int64_t>(shown);
    if (rest > 0)
      o_ << "<p class=\"more\"><span class=\"more-count\">" << rest
         << "</span> more not shown</p>\n";
  }

  const operator_view& v_;
  std::ostringstream o_;
};

}  // namespace

std::string html_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string query_encoded(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '.' || u == '_' || u == '~') {
      out += c;
    } else {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

std::string render_operator_page(const operator_view& v) {
  return page(v).render();
}

}  // namespace exactly::server
