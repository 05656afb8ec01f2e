// The same messages through switchboard's C ABI and through libjson-rpc-cpp (Debian
// libjsonrpccpp-dev) in one run, in memory (no network): each server gets the request
// bytes and produces the response bytes. Rounds are interleaved; the report gives the
// median and best ns per message for each and the ratio. Built and run by
// ffi/bench/vs_jsonrpccpp.sh.
#include <jsonrpccpp/server.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "switchboard.h"

static const char* ANSWER = "0x1b1ae4d6e2ef500000";

// ---- libjson-rpc-cpp: a connector that hands requests over in memory --------------
class MemoryConnector : public jsonrpc::AbstractServerConnector {
 public:
  bool StartListening() override { return true; }
  bool StopListening() override { return true; }
  bool SendResponse(const std::string& response, void*) override {
    last = response;
    return true;
  }
  const std::string& handle(const std::string& request) {
    last.clear();
    OnRequest(request, nullptr);
    return last;
  }
  std::string last;
};

class PeerServer : public jsonrpc::AbstractServer<PeerServer> {
 public:
  explicit PeerServer(MemoryConnector& c) : jsonrpc::AbstractServer<PeerServer>(c) {
    bindAndAddMethod(jsonrpc::Procedure("eth_getBalance", jsonrpc::PARAMS_BY_POSITION, jsonrpc::JSON_STRING,
                                        "address", jsonrpc::JSON_STRING, "block", jsonrpc::JSON_STRING, NULL),
                     &PeerServer::getBalance);
    bindAndAddNotification(jsonrpc::Procedure("eth_notify", jsonrpc::PARAMS_BY_POSITION, "address",
                                              jsonrpc::JSON_STRING, "block", jsonrpc::JSON_STRING, NULL),
                           &PeerServer::notify);
  }
  void getBalance(const Json::Value&, Json::Value& result) { result = ANSWER; }
  void notify(const Json::Value&) { notified++; }
  long notified = 0;
};

// ---- switchboard through its C ABI --------------------------------------------------
static int sb_get_balance(void*, const swb_call*, swb_writer* w) {
  return (int)swb_writer_string(w, ANSWER, std::strlen(ANSWER));
}
static void sb_notify(void* ud, const swb_call*) { (*static_cast<long*>(ud))++; }

struct Switchboard {
  const swb_router* router = nullptr;
  swb_session* session = nullptr;
  long notified = 0;
  std::string last;
  Switchboard() {
    swb_router_builder* b = nullptr;
    if (swb_router_builder_new(&b) ||
        swb_router_builder_method(b, "eth_getBalance", 14, sb_get_balance, nullptr, nullptr) ||
        swb_router_builder_notification(b, "eth_notify", 10, sb_notify, &notified, nullptr) ||
        swb_router_builder_build(b, &router) || swb_session_new(router, &session)) {
      std::fprintf(stderr, "switchboard setup failed\n");
      std::exit(1);
    }
  }
  ~Switchboard() {
    swb_session_free(session);
    swb_router_free(router);
  }
  // The response view, valid until the next call (no copy: that is the API's point).
  size_t handle(const std::string& request) {
    const uint8_t* out = nullptr;
    size_t n = 0;
    swb_session_handle(session, reinterpret_cast<const uint8_t*>(request.data()), request.size(), &out, &n);
    return n;
  }
  std::string handle_copy(const std::string& request) {
    const uint8_t* out = nullptr;
    size_t n = 0;
    swb_session_handle(session, reinterpret_cast<const uint8_t*>(request.data()), request.size(), &out, &n);
    return std::string(reinterpret_cast<const char*>(out), n);
  }
};

static std::string request(int id) {
  return R"({"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":)" +
         std::to_string(id) + "}";
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  std::string batch = "[";
  for (int i = 0; i < 10; i++) batch += (i ? "," : "") + request(i);
  batch += "]";
  struct Case {
    const char* name;
    std::string msg;
  };
  std::vector<Case> cases = {
      {"eth_getBalance request (115 B)", request(1)},
      {"notification", R"({"jsonrpc":"2.0","method":"eth_notify","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]})"},
      {"unknown method (-32601)", R"({"jsonrpc":"2.0","method":"eth_unknown","params":[],"id":7})"},
      {"parse error (-32700)", request(1).substr(0, 100)},
      {"batch of 10 requests (1.2 KB)", batch},
  };

  MemoryConnector conn;
  PeerServer peer(conn);
  Switchboard sb;

  // Both answer every case (formats differ: compare the substance).
  for (auto& c : cases) {
    std::string a = sb.handle_copy(c.msg), b = conn.handle(c.msg);
    bool same_kind = (a.empty() == b.empty()) && (a.find(ANSWER) != std::string::npos) == (b.find(ANSWER) != std::string::npos);
    std::printf("%-32s switchboard: %.70s%s\n%-32s libjson-rpc-cpp: %.70s%s\n", c.name, a.c_str(),
                a.size() > 70 ? "..." : "", "", b.c_str(), b.size() > 70 ? "..." : "");
    if (!same_kind) {
      std::fprintf(stderr, "the two servers disagree on %s\n", c.name);
      return 1;
    }
  }

  std::printf("\n%d interleaved rounds, ns per message (median / best round)\n", rounds);
  std::printf("%-32s %20s %20s %16s\n", "message", "switchboard C ABI", "libjson-rpc-cpp", "ratio (median)");
  for (auto& c : cases) {
    using clk = std::chrono::steady_clock;
    auto time = [&](auto&& f, int n) {
      auto t = clk::now();
      size_t sink = 0;
      for (int i = 0; i < n; i++) sink += f();
      auto ns = std::chrono::duration<double, std::nano>(clk::now() - t).count();
      if (sink == 42) std::printf(" ");
      return ns / n;
    };
    auto run_sb = [&] { return sb.handle(c.msg); };
    auto run_peer = [&] { return conn.handle(c.msg).size(); };
    // about 20 ms per round for each
    int n_sb = std::max(1000, (int)(2e7 / std::max(1.0, time(run_sb, 2000))));
    int n_peer = std::max(100, (int)(2e7 / std::max(1.0, time(run_peer, 200))));
    std::vector<double> a, b;
    for (int r = 0; r < rounds; r++) {
      if (r % 2) {
        a.push_back(time(run_sb, n_sb));
        b.push_back(time(run_peer, n_peer));
      } else {
        b.push_back(time(run_peer, n_peer));
        a.push_back(time(run_sb, n_sb));
      }
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    double ma = med(a), mb = med(b);
    double ba = *std::min_element(a.begin(), a.end()), bb = *std::min_element(b.begin(), b.end());
    std::printf("%-32s %9.1f / %8.1f %9.1f / %8.1f %15.1fx\n", c.name, ma, ba, mb, bb, mb / ma);
  }
  return 0;
}
