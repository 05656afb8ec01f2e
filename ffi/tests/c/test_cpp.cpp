// The C++17 wrapper (switchboard.hpp): RAII handles, string_view views, std::function
// handlers, exceptions both ways, a router shared by threads, the classifier.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "switchboard.hpp"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                             \
  do {                                                                          \
    checks++;                                                                   \
    if (!(cond)) {                                                              \
      failures++;                                                               \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                           \
  } while (0)

namespace sb = switchboard;
using namespace std::string_view_literals;

static std::atomic<int> notified{0};
static std::atomic<int> handlers_alive{0};

struct Tracked {
  Tracked() { handlers_alive++; }
  Tracked(const Tracked&) { handlers_alive++; }
  ~Tracked() { handlers_alive--; }
};

static sb::Router make_router() {
  sb::Config cfg;
  cfg.max_batch_len(50).max_depth(64);
  Tracked t;
  return sb::RouterBuilder()
      .config(cfg)
      .title("cpp")
      .method("hello",
              [t](const sb::Call& call, sb::Writer& out) {
                (void)t;
                std::string s = "hello ";
                s += call.params().empty() ? "world" : std::string(call.params());
                out.string(s);
              })
      .method("echo_id", [](const sb::Call& call, sb::Writer& out) { out.raw_json(call.id()); })
      .method("fails", [](const sb::Call&, sb::Writer&) { throw sb::RpcError(42, "no funds", R"({"missing":5})"); })
      .method("throws", [](const sb::Call&, sb::Writer&) { throw std::runtime_error("boom"); })
      .method("bad_json", [](const sb::Call&, sb::Writer& out) { out.raw_json("{"); })
      .method("twice",
              [](const sb::Call&, sb::Writer& out) {
                out.int64(1);
                try {
                  out.int64(2);
                } catch (const sb::Error& e) {
                  CHECK(e.code() == SWB_RESULT_ALREADY_ANSWERED);
                  out.number(0.5);  // throws again: the handler fails after a result: -32603
                }
              })
      .method("nothing", [](const sb::Call&, sb::Writer&) {})
      .method("types",
              [](const sb::Call& call, sb::Writer& out) {
                if (call.params() == "[1]") out.boolean(true);
                else if (call.params() == "[2]") out.uint64(7);
                else if (call.params() == "[3]") out.null();
                else out.error(-32602, "Invalid params");
              })
      .notification("note", [](const sb::Call& call) {
        CHECK(call.is_notification() || !call.id().empty());
        notified++;
      })
      .build();
}

static void session_basics() {
  sb::Router router = make_router();
  sb::Session s(router);
  auto r = s.handle(R"({"jsonrpc":"2.0","method":"hello","id":1})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":"hello world","id":1})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"hello","params":[1],"id":"a"})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":"hello [1]","id":"a"})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"echo_id","id":1.50})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":1.50,"id":1.50})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"fails","id":2})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","error":{"code":42,"message":"no funds","data":{"missing":5}},"id":2})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"throws","id":3})");
  CHECK(r && r->find("\"code\":-32603") != std::string_view::npos);
  r = s.handle(R"({"jsonrpc":"2.0","method":"bad_json","id":4})");
  CHECK(r && r->find("\"code\":-32603") != std::string_view::npos);
  r = s.handle(R"({"jsonrpc":"2.0","method":"twice","id":5})");
  CHECK(r && r->find("\"code\":-32603") != std::string_view::npos);
  r = s.handle(R"({"jsonrpc":"2.0","method":"nothing","id":6})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":null,"id":6})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"types","params":[1],"id":7})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":true,"id":7})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"types","params":[2],"id":7})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":7,"id":7})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"types","params":[3],"id":7})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":null,"id":7})"sv);
  r = s.handle(R"({"jsonrpc":"2.0","method":"types","id":7})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":7})"sv);
  notified = 0;
  CHECK(!s.handle(R"({"jsonrpc":"2.0","method":"note"})"));
  CHECK(!s.handle(R"([{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","result":1,"id":1}])"));
  CHECK(notified == 2);
  CHECK(s.dropped_responses() == 1);
  // limits from the Config
  std::string deep = R"({"jsonrpc":"2.0","method":"hello","id":1,"params":)" + std::string(64, '[') +
                     std::string(64, ']') + "}";
  r = s.handle(deep);
  CHECK(r && r->find("\"code\":-32700") != std::string_view::npos);
  // binary input with NULs is just bytes
  r = s.handle(std::string_view("{\"a\0", 4));
  CHECK(r && r->find("\"code\":-32700") != std::string_view::npos);
  // moves
  sb::Session moved(std::move(s));
  r = moved.handle(R"({"jsonrpc":"2.0","method":"hello","id":9})");
  CHECK(r && *r == R"({"jsonrpc":"2.0","result":"hello world","id":9})"sv);
}

static void builder_errors() {
  sb::RouterBuilder b;
  b.method("m", [](const sb::Call&, sb::Writer&) {});
  bool threw = false;
  try {
    b.method("m", [](const sb::Call&, sb::Writer&) {});
  } catch (const sb::Error& e) {
    threw = e.code() == SWB_RESULT_DUPLICATE_METHOD &&
            std::strcmp(e.what(), swb_result_str(SWB_RESULT_DUPLICATE_METHOD)) == 0;
  }
  CHECK(threw);
  threw = false;
  try {
    b.notification("rpc.x", [](const sb::Call&) {});
  } catch (const sb::Error& e) {
    threw = e.code() == SWB_RESULT_RESERVED_METHOD_NAME;
  }
  CHECK(threw);
  threw = false;
  try {
    sb::Config c;
    c.max_depth(0);
  } catch (const sb::Error& e) {
    threw = e.code() == SWB_RESULT_INVALID_LIMIT;
  }
  CHECK(threw);
  sb::Router r = b.build();
  sb::Router copy = r;  // another reference
  CHECK(copy.get() == r.get());
}

static void threads() {
  sb::Router router = make_router();
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++) {
    ts.emplace_back([router, t, &bad] {  // each thread copies (references) the router
      sb::Session s(router);
      for (int i = 0; i < 2000; i++) {
        std::string msg = R"({"jsonrpc":"2.0","method":"echo_id","id":)" + std::to_string(t * 100000 + i) + "}";
        std::string want = R"({"jsonrpc":"2.0","result":)" + std::to_string(t * 100000 + i) +
                           R"(,"id":)" + std::to_string(t * 100000 + i) + "}";
        auto r = s.handle(msg);
        if (!r || *r != want) bad++;
      }
    });
  }
  for (auto& t : ts) t.join();
  CHECK(bad == 0);
}

static void classifier() {
  sb::Classifier c;
  sb::Message m = c.classify(R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"x"})");
  CHECK(m.is_request());
  CHECK(m.method() == "sum");
  CHECK(m.id() == R"("x")");
  CHECK(m.params() == "[1,2]");
  m = c.classify(R"([{"jsonrpc":"2.0","method":"a"},{"id":1}])");
  CHECK(m.is_batch() && m.batch_len() == 2);
  CHECK(c.at(0).is_notification());
  CHECK(c.at(1).is_error());
  CHECK(c.at(1).error_code() == -32600);
  CHECK(c.at(1).error_field() == "jsonrpc");
  bool threw = false;
  try {
    c.at(2);
  } catch (const sb::Error& e) {
    threw = e.code() == SWB_RESULT_INDEX_OUT_OF_RANGE;
  }
  CHECK(threw);
  sb::Config cfg;
  cfg.allow_batches(false);
  sb::Classifier nob(cfg);
  CHECK(nob.classify("[1]").error_reason() == "batches are disabled");
}

// Checks that the session answers in with want.
static void expect_answer(sb::Session& s, std::string_view in, std::string_view want) {
  auto got = s.handle(in);
  CHECK(got && *got == want);
  if (!got || *got != want)
    std::fprintf(stderr, "  for %.*s got %.*s\n", int(in.size()), in.data(),
                 got ? int(got->size()) : 0, got ? got->data() : "");
}

// Params read in place through sb::Value: positional and named, strings unescaped,
// iteration, and failed reads answering -32602.
static void params_values() {
  sb::Router router =
      sb::RouterBuilder()
          .method("subtract",
                  [](const sb::Call& call, sb::Writer& out) {
                    sb::Value p = call.params_value();
                    if (p.is_array()) {
                      CHECK(p.size() <= 2);  // [1]: p[1] is missing
                      out.int64(p[std::size_t{0}].as_int64() - p[1].as_int64());
                    } else {
                      out.int64(p["minuend"].as_int64() - p["subtrahend"].as_int64());
                    }
                  })
          .method("describe",
                  [](const sb::Call& call, sb::Writer& out) {
                    // keys and string values unescaped, numbers as doubles, nested walked
                    std::string s;
                    for (const auto& m : call.params_value()) {
                      if (!m.key.is_absent()) s += m.key.str() + "=";
                      if (m.value.is_string()) {
                        s += m.value.str();
                        CHECK(m.value.plain_str().has_value() == (m.value.json().find('\\') == std::string_view::npos));
                      } else if (m.value.is_number()) {
                        s += std::to_string(m.value.as_double());
                      } else if (m.value.is_array() || m.value.is_object()) {
                        std::size_t n = 0;
                        for (const auto& inner : m.value) {
                          (void)inner;
                          n++;
                        }
                        CHECK(n == m.value.size());
                        s += "#" + std::to_string(n);
                      } else if (m.value.is_bool()) {
                        s += m.value.as_bool() ? "T" : "F";
                      } else {
                        s += m.value.json();
                      }
                      s += ";";
                    }
                    CHECK(!call.params_value().is_absent());
                    out.string(s);
                  })
          .method("absent",
                  [](const sb::Call& call, sb::Writer& out) {
                    sb::Value p = call.params_value();
                    CHECK(p.is_absent() && p.json().empty());
                    bool threw = false;
                    try {
                      (void)p["x"];
                    } catch (const sb::Error& e) {
                      threw = e.code() == SWB_RESULT_WRONG_KIND;
                    }
                    CHECK(threw);
                    out.boolean(true);
                  })
          .build();
  sb::Session s(router);
  auto is = [&](std::string_view in, std::string_view want) { expect_answer(s, in, want); };
  is(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})",
     R"({"jsonrpc":"2.0","result":19,"id":1})");
  is(R"({"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"min\u0075end":42},"id":2})",
     R"({"jsonrpc":"2.0","result":19,"id":2})");
  is(R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":1.5,"subtrahend":1},"id":3})",
     R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"detail":"the number does not fit the requested type","field":"params","reason":"do not fit the method"}},"id":3})");
  is(R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":1},"id":4})",
     R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"detail":"missing field `subtrahend`","field":"params","reason":"do not fit the method"}},"id":4})");
  is(R"({"jsonrpc":"2.0","method":"subtract","params":["a","b"],"id":5})",
     R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"detail":"the value is not of the kind this reader needs","field":"params","reason":"do not fit the method"}},"id":5})");
  is(R"({"jsonrpc":"2.0","method":"subtract","id":6})",
     R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"detail":"the value is not of the kind this reader needs","field":"params","reason":"do not fit the method"}},"id":6})");
  is(R"({"jsonrpc":"2.0","method":"describe","params":{"caf\u00e9":"a\nb","n":2.5,"l":[1,[2],{}],"o":{"x":1},"t":true,"z":null,"p":"plain"},"id":7})",
     "{\"jsonrpc\":\"2.0\",\"result\":\"caf\u00e9=a\\nb;n=2.500000;l=#3;o=#1;t=T;z=null;p=plain;\",\"id\":7}");
  is(R"({"jsonrpc":"2.0","method":"absent","id":8})", R"({"jsonrpc":"2.0","result":true,"id":8})");
  is(R"({"jsonrpc":"2.0","method":"subtract","params":[1],"id":9})",
     R"({"jsonrpc":"2.0","error":)" + std::string(R"({"code":-32602,"message":"Invalid params","data":{"detail":"missing element 1","field":"params","reason":"do not fit the method"}})") + R"(,"id":9})");
}

// Results built with the Writer's objects, arrays and keys: a user's text with quotes,
// backslashes, control characters and non-ASCII comes out as valid, exact JSON; misuse
// throws; a handler's exception reaches the client's error data.
static void writer_values() {
  sb::Router router =
      sb::RouterBuilder()
          .method("profile",
                  [](const sb::Call& call, sb::Writer& out) {
                    sb::Value p = call.params_value();
                    out.begin_object();
                    out.key("name");
                    out.string(p["name"].str());
                    out.key("len");
                    out.uint64(p["name"].str().size());
                    out.key("tags");
                    out.begin_array();
                    for (const auto& t : p["tags"]) out.string(t.value.str());
                    out.begin_object();
                    out.end_object();
                    out.end_array();
                    out.key("ok");
                    out.boolean(true);
                    out.key("raw");
                    out.raw_json(R"([1, {"a": null}])");
                    out.end_object();
                  })
          .method("misuse",
                  [](const sb::Call&, sb::Writer& out) {
                    auto code = [&](auto f) {
                      try {
                        f();
                      } catch (const sb::Error& e) {
                        return e.code();
                      }
                      return SWB_RESULT_OK;
                    };
                    CHECK(code([&] { out.key("x"); }) == SWB_RESULT_WRITER_STATE);
                    out.begin_array();
                    CHECK(code([&] { out.key("x"); }) == SWB_RESULT_WRITER_STATE);
                    CHECK(code([&] { out.end_object(); }) == SWB_RESULT_WRITER_STATE);
                    CHECK(code([&] { out.string("\xff"); }) == SWB_RESULT_INVALID_UTF8);
                    out.begin_object();
                    CHECK(code([&] { out.int64(1); }) == SWB_RESULT_WRITER_STATE);
                    out.key("k");
                    out.number(0.25);
                    out.end_object();
                    out.end_array();
                  })
          .method("left_open", [](const sb::Call&, sb::Writer& out) { out.begin_object(); })
          .method("throws", [](const sb::Call&, sb::Writer&) {
            throw std::runtime_error("cannot open \"db\":\n\tdenied");
          })
          .method("writer_error", [](const sb::Call&, sb::Writer& out) {
            out.begin_object();
            out.end_array();  // throws Error(WRITER_STATE): -32603 with its text
          })
          .build();
  sb::Session s(router);
  auto is = [&](std::string_view in, std::string_view want) { expect_answer(s, in, want); };
  is(R"({"jsonrpc":"2.0","method":"profile","params":{"name":"Zo\u00eb \"Z\" \\ \u0001\n\ud83d\ude00","tags":["a\"b","\u20ac"]},"id":1})",
     "{\"jsonrpc\":\"2.0\",\"result\":{\"name\":\"Zo\xc3\xab \\\"Z\\\" \\\\ \\u0001\\n\xf0\x9f\x98\x80\",\"len\":17,"
     "\"tags\":[\"a\\\"b\",\"\xe2\x82\xac\",{}],\"ok\":true,\"raw\":[1, {\"a\": null}]},\"id\":1}");
  is(R"({"jsonrpc":"2.0","method":"misuse","id":2})", R"({"jsonrpc":"2.0","result":[{"k":0.25}],"id":2})");
  is(R"({"jsonrpc":"2.0","method":"left_open","id":3})",
     R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"detail":"the handler left an array or object open","reason":"the handler failed"}},"id":3})");
  is(R"({"jsonrpc":"2.0","method":"throws","id":4})",
     R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"detail":"cannot open \"db\":\n\tdenied","reason":"the handler failed"}},"id":4})");
  is(R"({"jsonrpc":"2.0","method":"writer_error","id":5})",
     R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"detail":"the writer expects a key, a value or another end here","reason":"the handler failed"}},"id":5})");
}

int main() {
  CHECK(sb::version() == SWB_VERSION);
  params_values();
  writer_values();
  session_basics();
  builder_errors();
  threads();
  classifier();
  CHECK(handlers_alive == 0);  // every std::function freed with its router
  if (failures) {
    std::fprintf(stderr, "test_cpp: %d of %d checks FAILED\n", failures, checks);
    return 1;
  }
  std::printf("test_cpp: %d checks passed\n", checks);
  return 0;
}
