// The driver shared by the C++ harnesses (c_abi.cpp, jsonrpccpp.cpp): the same
// command line, checks and timing loop as the Go harness (go/main.go), so that
// every stack is measured the same way. A stack is a class with
//     bool handle(const std::string& request, const char** out, size_t* out_len);
// that turns request bytes into response bytes in process (out_len 0: nothing
// to send); the response stays valid until the next call.
//
//   HARNESS check DIR W...        check each workload's response, print it
//   HARNESS time DIR BLOCKS W...  check, then time: one line per workload,
//                                 "W<TAB>min ns<TAB>median ns" per message over
//                                 BLOCKS blocks of ~2 ms each
//   HARNESS count DIR W N         check, then handle W's request N times (for
//                                 callgrind: instructions = difference of two N)
//
// DIR/W.req holds the request bytes and DIR/W.resp switchboard's response (empty:
// no response), written by run.sh from switchboard's own server. A response must
// parse to the same JSON (jsoncpp values: member order and spacing aside, the
// type of each number kept) and be byte-identical on a second call; every timed
// call is then compared with it byte for byte (as benches/src/bin/count.rs does
// for the Rust stacks), and a difference stops the run.
#ifndef SWB_EXTERNAL_HARNESS_HPP
#define SWB_EXTERNAL_HARNESS_HPP

#include <json/json.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace harness {

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline bool parse(const std::string& text, Json::Value& out) {
  Json::CharReaderBuilder b;
  std::unique_ptr<Json::CharReader> r(b.newCharReader());
  std::string err;
  return r->parse(text.data(), text.data() + text.size(), &out, &err);
}

struct Workload {
  std::string name, request, expected, own;  // own: this stack's checked response
};

// Error objects compared as `count check` compares the Rust stacks' (dispatch.rs's
// same_answer): by code, and their message being a string; the message's words and
// the `data` member are each library's own.
inline void errors_by_code(Json::Value& v) {
  auto one = [](Json::Value& r) {
    if (r.isObject() && r.isMember("error")) {
      Json::Value e(Json::objectValue);
      e["code"] = r["error"].get("code", Json::Value());
      e["message_is_string"] = r["error"].get("message", Json::Value()).isString();
      r["error"] = e;
    }
  };
  if (v.isArray()) {
    for (auto& r : v) one(r);
  } else {
    one(v);
  }
}

// Checks `s` on `w`: the same answer as switchboard's (the same JSON, errors by
// code: errors_by_code), twice, byte-identical the second time. Keeps the stack's
// own response in w.own for the timing loops.
template <class S>
bool check(S& s, Workload& w, bool verbose) {
  const char* out = nullptr;
  size_t n = 0;
  if (!s.handle(w.request, &out, &n)) {
    std::fprintf(stderr, "%s: the stack failed to handle the message\n", w.name.c_str());
    return false;
  }
  w.own.assign(out ? out : "", n);
  bool same;
  // Ignore a trailing newline some stacks add to a response: JSON-wise it is nothing.
  if (w.expected.empty() || w.own.empty()) {
    same = w.expected.empty() && w.own.find_first_not_of(" \r\n\t") == std::string::npos;
  } else {
    Json::Value a, b;
    same = parse(w.own, a) && parse(w.expected, b);
    if (same) {
      errors_by_code(a);
      errors_by_code(b);
      same = a == b;
    }
  }
  if (!same) {
    std::fprintf(stderr, "%s: MISMATCH\n  request:     %s\n  switchboard: %s\n  this stack:  %s\n",
                 w.name.c_str(), w.request.c_str(), w.expected.c_str(), w.own.c_str());
    return false;
  }
  if (!s.handle(w.request, &out, &n) || std::string(out ? out : "", n) != w.own) {
    std::fprintf(stderr, "%s: a second call answered differently\n", w.name.c_str());
    return false;
  }
  if (verbose) {
    std::string shown = w.own.substr(0, w.own.find_last_not_of(" \r\n\t") + 1);
    if (shown.size() > 100) shown = shown.substr(0, 97) + "...";
    std::printf("  %-24s ok  %s\n", w.name.c_str(), shown.empty() ? "(no response)" : shown.c_str());
  }
  return true;
}

// One timed message: handle it and compare with the checked response.
template <class S>
inline void one(S& s, const Workload& w) {
  const char* out = nullptr;
  size_t n = 0;
  bool ok = s.handle(w.request, &out, &n);
  if (!ok || n != w.own.size() || (n && std::memcmp(out, w.own.data(), n) != 0)) {
    std::fprintf(stderr, "%s: a timed call answered differently\n", w.name.c_str());
    std::exit(1);
  }
}

template <class S>
double block_ns(S& s, const Workload& w, long k) {
  auto t = std::chrono::steady_clock::now();
  for (long i = 0; i < k; i++) one(s, w);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count() / k;
}

template <class S>
int run(S& s, int argc, char** argv) {
  auto usage = [] {
    std::fprintf(stderr, "usage: HARNESS check DIR W... | time DIR BLOCKS W... | count DIR W N\n");
    return 2;
  };
  if (argc < 4) return usage();
  std::string mode = argv[1], dir = argv[2];
  int first = 3;
  long blocks = 0, count = 0;
  if (mode == "time") {
    blocks = std::atol(argv[3]);
    first = 4;
  } else if (mode == "count") {
    if (argc != 5) return usage();
    count = std::atol(argv[4]);
  } else if (mode != "check") {
    return usage();
  }
  std::vector<Workload> ws;
  for (int i = first; i < argc && !(mode == "count" && i > first); i++) {
    Workload w;
    w.name = argv[i];
    w.request = read_file(dir + "/" + w.name + ".req");
    w.expected = read_file(dir + "/" + w.name + ".resp");
    ws.push_back(w);
  }
  bool ok = true;
  for (auto& w : ws) ok = check(s, w, mode == "check") && ok;
  if (!ok) {
    std::fprintf(stderr, "refusing to time: the answers above are not switchboard's\n");
    return 1;
  }
  if (mode == "count") {
    for (long i = 0; i < count; i++) one(s, ws[0]);
    return 0;
  }
  if (mode == "time") {
    for (auto& w : ws) {
      block_ns(s, w, 100);  // warm-up
      double t = block_ns(s, w, 100);
      long k = std::clamp((long)(2e6 / std::max(t, 1.0)), 1L, 200000L);
      std::vector<double> v;
      for (long b = 0; b < blocks; b++) v.push_back(block_ns(s, w, k));
      std::sort(v.begin(), v.end());
      std::printf("%s\t%.1f\t%.1f\n", w.name.c_str(), v.front(), v[v.size() / 2]);
    }
  }
  return 0;
}

}  // namespace harness

#endif
