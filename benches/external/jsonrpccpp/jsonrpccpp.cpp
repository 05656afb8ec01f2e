// libjson-rpc-cpp (Debian libjsonrpccpp-dev 0.7, on jsoncpp) serving the demo
// methods in process: the server's protocol handler (the object an
// AbstractServerConnector hands each request to; OnRequest is that call plus
// SendResponse) is called directly from request bytes to response bytes, with one
// reused response string: the cheapest path its public API offers. Methods are
// declared the way the library documents (jsonrpc::Procedure with typed params,
// which it checks before the call), with the demo's semantics in the bodies.
// `subtract` takes its params by position or by name, as the demo's does; a
// Procedure has one declaration type, so it is declared without parameters (the
// library then passes any params through) and its body checks the shape.
// `tools/call` is the benches' MCP-style method (benches/src/dispatch.rs).
// Driven by harness.hpp; built and run by benches/external/run.sh.
#include <jsonrpccpp/server.h>

#include <cstdint>

#include "../harness.hpp"

static const char* const BALANCE = "0x1bdb569fa3c2565cc";

// A connector that never listens: requests are handed to the handler in memory.
class MemoryConnector : public jsonrpc::AbstractServerConnector {
 public:
  bool StartListening() override { return true; }
  bool StopListening() override { return true; }
  bool SendResponse(const std::string&, void*) override { return true; }
};

static bool is_hex(const std::string& s, size_t from) {
  bool ok = true;
  for (size_t i = from; i < s.size(); i++) {
    unsigned char c = s[i];
    ok &= ((unsigned char)(c - '0') < 10) | ((unsigned char)((c | 0x20) - 'a') < 6);
  }
  return ok;
}

class DemoServer : public jsonrpc::AbstractServer<DemoServer> {
 public:
  explicit DemoServer(MemoryConnector& c) : jsonrpc::AbstractServer<DemoServer>(c) {
    using namespace jsonrpc;
    bindAndAddMethod(Procedure("subtract", PARAMS_BY_POSITION, JSON_REAL, NULL), &DemoServer::subtract);
    bindAndAddMethod(Procedure("get_data", PARAMS_BY_POSITION, JSON_ARRAY, NULL), &DemoServer::getData);
    bindAndAddMethod(Procedure("eth_getBalance", PARAMS_BY_POSITION, JSON_STRING, "address", JSON_STRING,
                               "block", JSON_STRING, NULL),
                     &DemoServer::getBalance);
    bindAndAddMethod(Procedure("tools/call", PARAMS_BY_NAME, JSON_OBJECT, "name", JSON_STRING, "arguments",
                               JSON_OBJECT, NULL),
                     &DemoServer::toolsCall);
    bindAndAddNotification(Procedure("update", PARAMS_BY_POSITION, NULL), &DemoServer::update);
  }
  // An integer literal that fits int64 (jsoncpp also calls 1e2 an Int64; the demo
  // does not).
  static bool exact_int(const Json::Value& v) {
    return (v.type() == Json::intValue || v.type() == Json::uintValue) && v.isInt64();
  }
  void subtract(const Json::Value& p, Json::Value& result) {
    Json::Value a, b;
    if (p.isArray() && p.size() == 2) {
      a = p[0u], b = p[1u];
    } else if (p.isObject() && p.size() == 2 && p.isMember("minuend") && p.isMember("subtrahend")) {
      a = p["minuend"], b = p["subtrahend"];
    }
    if (!a.isNumeric() || !b.isNumeric()) throw jsonrpc::JsonRpcException(-32602, "Invalid params");
    int64_t r;
    if (exact_int(a) && exact_int(b) && !__builtin_sub_overflow(a.asInt64(), b.asInt64(), &r)) {
      result = Json::Value(Json::Int64(r));
    } else {
      double d = a.asDouble() - b.asDouble();
      if (d - d != 0) throw jsonrpc::JsonRpcException(-32602, "Invalid params");
      result = d;
    }
  }
  // The tool's name as text content and how many arguments it got.
  void toolsCall(const Json::Value& p, Json::Value& result) {
    Json::Value text(Json::objectValue);
    text["type"] = "text";
    text["text"] = p["name"];
    result = Json::Value(Json::objectValue);
    result["content"].append(text);
    result["structuredContent"]["arguments"] = Json::UInt(p["arguments"].size());
    result["isError"] = false;
  }
  void getData(const Json::Value&, Json::Value& result) {
    result = Json::Value(Json::arrayValue);
    result.append("hello");
    result.append(5);
  }
  void getBalance(const Json::Value& p, Json::Value& result) {
    const std::string a = p[0u].asString(), b = p[1u].asString();
    bool address = a.size() == 42 && a.compare(0, 2, "0x") == 0 && is_hex(a, 2);
    bool block = b == "latest" || b == "earliest" || b == "pending" || b == "safe" || b == "finalized" ||
                 (b.size() > 2 && b.compare(0, 2, "0x") == 0 && is_hex(b, 2));
    if (!address || !block) throw jsonrpc::JsonRpcException(-32602, "Invalid params");
    result = BALANCE;
  }
  void update(const Json::Value&) { updates++; }
  uint64_t updates = 0;
};

struct JsonRpcCpp {
  MemoryConnector connector;
  DemoServer server{connector};
  std::string response;
  bool handle(const std::string& in, const char** out, size_t* n) {
    response.clear();
    connector.GetHandler()->HandleRequest(in, response);
    *out = response.data();
    *n = response.size();
    return true;
  }
};

int main(int argc, char** argv) {
  JsonRpcCpp s;
  return harness::run(s, argc, argv);
}
