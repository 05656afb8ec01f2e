/* The writer's objects and arrays (swb_writer_begin_object/_array, _key, _end_*):
 * results built value by value with every key and string escaped, the state errors
 * (SWB_RESULT_WRITER_STATE, nothing written), a value left open (-32603), the depth
 * limit, errors written while a value is open, and the detail-carrying errors
 * (swb_writer_invalid_params, swb_writer_handler_failed). */
#include "harness.h"

#define W(s) (s), strlen(s)

/* {"s":"<user text>","n":[1,-2,3.5,true,null,{}],"raw":{"a":[1]},"e":[]} */
static int nested(void *ud, const swb_call *call, swb_writer *w) {
  /* a user's text with a quote, a backslash, control characters and non-ASCII */
  static const char user[] = "say \"hi\" \\ \n\t\x01\x1f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_begin_object(w));
  CHECK_OK(swb_writer_key(w, W("s")));
  CHECK_OK(swb_writer_string(w, user, sizeof user - 1));
  CHECK_OK(swb_writer_key(w, W("k\"ey\n")));
  CHECK_OK(swb_writer_begin_array(w));
  CHECK_OK(swb_writer_int64(w, 1));
  CHECK_OK(swb_writer_int64(w, -2));
  CHECK_OK(swb_writer_double(w, 3.5));
  CHECK_OK(swb_writer_bool(w, 1));
  CHECK_OK(swb_writer_null(w));
  CHECK_OK(swb_writer_uint64(w, 18446744073709551615u));
  CHECK_OK(swb_writer_begin_object(w));
  CHECK_OK(swb_writer_end_object(w));
  CHECK_OK(swb_writer_end_array(w));
  CHECK_OK(swb_writer_key(w, W("raw")));
  CHECK_OK(swb_writer_raw_json(w, W(" {\"a\":[1]}\n")));
  CHECK_OK(swb_writer_key(w, W("e")));
  CHECK_OK(swb_writer_begin_array(w));
  CHECK_OK(swb_writer_end_array(w));
  CHECK_OK(swb_writer_end_object(w));
  /* answered: everything else is refused */
  CHECK_RC(swb_writer_begin_array(w), SWB_RESULT_ALREADY_ANSWERED);
  CHECK_RC(swb_writer_int64(w, 1), SWB_RESULT_ALREADY_ANSWERED);
  return 0;
}

/* Every misuse gives SWB_RESULT_WRITER_STATE and writes nothing: the result is
 * still the one built around them. */
static int misuse(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_RC(swb_writer_key(w, W("k")), SWB_RESULT_WRITER_STATE);  /* no object open */
  CHECK_RC(swb_writer_end_object(w), SWB_RESULT_WRITER_STATE);
  CHECK_RC(swb_writer_end_array(w), SWB_RESULT_WRITER_STATE);
  CHECK_OK(swb_writer_begin_object(w));
  CHECK_RC(swb_writer_int64(w, 1), SWB_RESULT_WRITER_STATE);     /* a value before its key */
  CHECK_RC(swb_writer_begin_array(w), SWB_RESULT_WRITER_STATE);
  CHECK_RC(swb_writer_end_array(w), SWB_RESULT_WRITER_STATE);    /* not the innermost */
  CHECK_OK(swb_writer_key(w, W("a")));
  CHECK_RC(swb_writer_key(w, W("b")), SWB_RESULT_WRITER_STATE);  /* a key after a key */
  CHECK_RC(swb_writer_end_object(w), SWB_RESULT_WRITER_STATE);   /* its value is due */
  CHECK_RC(swb_writer_string(w, "\xff", 1), SWB_RESULT_INVALID_UTF8);
  CHECK_RC(swb_writer_raw_json(w, W("[1,")), SWB_RESULT_INVALID_JSON);
  CHECK_RC(swb_writer_double(w, strtod("inf", NULL)), SWB_RESULT_NOT_FINITE);
  CHECK_OK(swb_writer_begin_array(w));
  CHECK_RC(swb_writer_key(w, W("c")), SWB_RESULT_WRITER_STATE);  /* no key in an array */
  CHECK_RC(swb_writer_end_object(w), SWB_RESULT_WRITER_STATE);
  CHECK_OK(swb_writer_string(w, W("x")));
  CHECK_OK(swb_writer_end_array(w));
  CHECK_RC(swb_writer_key(w, "\xc3", 1), SWB_RESULT_INVALID_UTF8);
  CHECK_OK(swb_writer_end_object(w));
  return 0;
}

static int left_open(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_begin_array(w));
  CHECK_OK(swb_writer_int64(w, 1));
  return 0;
}

/* 128 levels are a result; 129 are refused at the last end, and dropped. */
static int deep(void *ud, const swb_call *call, swb_writer *w) {
  size_t levels = *(const size_t *)ud, i;
  (void)call;
  for (i = 0; i < levels; i++) CHECK_OK(swb_writer_begin_array(w));
  for (i = 0; i + 1 < levels; i++) CHECK_OK(swb_writer_end_array(w));
  if (levels > 128) {
    CHECK_RC(swb_writer_end_array(w), SWB_RESULT_INVALID_JSON);
    CHECK_OK(swb_writer_string(w, W("too deep")));
  } else {
    CHECK_OK(swb_writer_end_array(w));
  }
  return 0;
}

/* An error written while an object is open is the answer. */
static int error_inside(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_begin_object(w));
  CHECK_OK(swb_writer_key(w, W("a")));
  CHECK_OK(swb_writer_error(w, 7, W("seven"), NULL, 0));
  CHECK_RC(swb_writer_int64(w, 1), SWB_RESULT_ALREADY_ANSWERED);
  return 1;
}

static int invalid_params(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_invalid_params(w, W("missing field `sub\"trahend`")));
  CHECK_RC(swb_writer_invalid_params(w, W("again")), SWB_RESULT_ALREADY_ANSWERED);
  return 1;
}

static int handler_failed(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_RC(swb_writer_handler_failed(w, "\xff", 1), SWB_RESULT_INVALID_UTF8);
  CHECK_OK(swb_writer_handler_failed(w, W("disk full:\n/var")));
  return 0; /* the written error stands whatever the return value */
}

int main(void) {
  swb_router_builder *b;
  const swb_router *r;
  swb_session *s;
  size_t levels128 = 128, levels129 = 129;
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, W("nested"), nested, NULL, NULL));
  CHECK_OK(swb_router_builder_method(b, W("misuse"), misuse, NULL, NULL));
  CHECK_OK(swb_router_builder_method(b, W("left_open"), left_open, NULL, NULL));
  CHECK_OK(swb_router_builder_method(b, W("deep128"), deep, &levels128, NULL));
  CHECK_OK(swb_router_builder_method(b, W("deep129"), deep, &levels129, NULL));
  CHECK_OK(swb_router_builder_method(b, W("error_inside"), error_inside, NULL, NULL));
  CHECK_OK(swb_router_builder_method(b, W("invalid_params"), invalid_params, NULL, NULL));
  CHECK_OK(swb_router_builder_method(b, W("handler_failed"), handler_failed, NULL, NULL));
  CHECK_OK(swb_router_builder_build(b, &r));
  CHECK_OK(swb_session_new(r, &s));

  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"nested\",\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":{\"s\":\"say \\\"hi\\\" \\\\ \\n\\t\\u0001\\u001f "
               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\"k\\\"ey\\n\":[1,-2,3.5,true,null,"
               "18446744073709551615,{}],\"raw\":{\"a\":[1]},\"e\":[]},\"id\":1}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"misuse\",\"id\":2}",
               "{\"jsonrpc\":\"2.0\",\"result\":{\"a\":[\"x\"]},\"id\":2}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"left_open\",\"id\":3}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32603,\"message\":\"Internal error\","
               "\"data\":{\"detail\":\"the handler left an array or object open\","
               "\"reason\":\"the handler failed\"}},\"id\":3}");
  {
    const uint8_t *out;
    size_t n;
    const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"deep128\",\"id\":4}";
    CHECK_OK(swb_session_handle(s, (const uint8_t *)m, strlen(m), &out, &n));
    CHECK(bytes_starts_with(out, n, "{\"jsonrpc\":\"2.0\",\"result\":[[[["));
    CHECK(n == strlen("{\"jsonrpc\":\"2.0\",\"result\":,\"id\":4}") + 2 * 128);
  }
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"deep129\",\"id\":5}",
               "{\"jsonrpc\":\"2.0\",\"result\":\"too deep\",\"id\":5}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"error_inside\",\"id\":6}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":7,\"message\":\"seven\"},\"id\":6}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"invalid_params\",\"id\":7}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32602,\"message\":\"Invalid params\","
               "\"data\":{\"detail\":\"missing field `sub\\\"trahend`\",\"field\":\"params\","
               "\"reason\":\"do not fit the method\"}},\"id\":7}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"handler_failed\",\"id\":8}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32603,\"message\":\"Internal error\","
               "\"data\":{\"detail\":\"disk full:\\n/var\",\"reason\":\"the handler failed\"}},"
               "\"id\":8}");
  /* a notification builds its value too, and sends nothing */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"nested\"}", NULL);
  /* outside a callback: NULL */
  CHECK_RC(swb_writer_begin_object(NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_writer_key(NULL, W("k")), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_writer_invalid_params(NULL, W("k")), SWB_RESULT_NULL_PARAMETER);

  swb_session_free(s);
  swb_router_free(r);
  return harness_finish("test_writer");
}
