#include "ember/core/memory_summary.h"

#include <cstdio>
#include <sstream>

namespace ember {

std::string format_bytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string memory_summary(const MemoryStats& s, const Device& device) {
  std::ostringstream os;
  char line[160];
  const char* rule =
      "|===========================================================================|\n";
  os << rule;
  std::snprintf(line, sizeof line, "| %-73s |\n",
                ("ember memory summary, device " + device.str()).c_str());
  os << line << rule;
  std::snprintf(line, sizeof line, "| %-26s| %11s | %11s | %11s | %11s |\n", "Metric", "Cur Usage",
                "Peak Usage", "Tot Alloc", "Tot Freed");
  os << line << rule;
  auto row = [&](const char* name, const StatArray& a, bool bytes) {
    const char* pools[] = {"", "      from small pool", "      from large pool"};
    for (int p = 0; p < 3; ++p) {
      auto fmt = [&](int64_t v) {
        return bytes ? format_bytes(static_cast<size_t>(v)) : std::to_string(v);
      };
      std::snprintf(line, sizeof line, "| %-26s| %11s | %11s | %11s | %11s |\n",
                    p == 0 ? name : pools[p], fmt(a[p].current).c_str(), fmt(a[p].peak).c_str(),
                    fmt(a[p].allocated).c_str(), fmt(a[p].freed).c_str());
      os << line;
    }
    os << "|---------------------------------------------------------------------------|\n";
  };
  row("Allocated memory", s.allocated_bytes, true);
  row("Active memory", s.active_bytes, true);
  row("Requested memory", s.requested_bytes, true);
  row("Reserved memory", s.reserved_bytes, true);
  row("Non-releasable memory", s.inactive_split_bytes, true);
  row("Allocations", s.allocation, false);
  row("Active allocs", s.active, false);
  row("Device reserved segments", s.segment, false);
  row("Non-releasable allocs", s.inactive_split, false);
  std::snprintf(line, sizeof line, "| %-26s %-46s |\n",
                "Allocation retries:", std::to_string(s.num_alloc_retries).c_str());
  os << line;
  std::snprintf(line, sizeof line, "| %-26s %-46s |\n",
                "Out-of-memory errors:", std::to_string(s.num_ooms).c_str());
  os << line << rule;
  return os.str();
}

}  // namespace ember
