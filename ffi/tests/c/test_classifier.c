/* The low-level classifier through the C API: every kind, the views, batches and
 * their elements, errors with their ready-made responses, limits, reuse. */
#include "harness.h"

static swb_message classify(swb_classifier *c, const char *msg) {
  swb_message m;
  memset(&m, 0xAB, sizeof m); /* garbage: every field must be written */
  CHECK_OK(swb_classifier_classify(c, (const uint8_t *)msg, strlen(msg), &m));
  return m;
}

static void empty_view(swb_slice v, int line) {
  if (v.ptr != NULL || v.len != 0) {
    harness_failures++;
    fprintf(stderr, "test_classifier.c:%d: view not empty\n", line);
  }
  harness_checks++;
}
#define CHECK_EMPTY(v) empty_view((v), __LINE__)

static void kinds(swb_classifier *c) {
  swb_message m;
  const char *req = "{\"jsonrpc\":\"2.0\",\"method\":\"eth_getBalance\",\"params\":[\"0xd8dA\",\"latest\"],\"id\":1}";

  m = classify(c, req);
  CHECK(m.kind == SWB_KIND_REQUEST);
  CHECK_SLICE(m.method, "eth_getBalance");
  CHECK(m.method_exact);
  CHECK_SLICE(m.id, "1");
  CHECK_SLICE(m.params, "[\"0xd8dA\",\"latest\"]");
  /* views point into the input: zero copy */
  CHECK(m.params.ptr > (const uint8_t *)req && m.params.ptr < (const uint8_t *)req + strlen(req));
  CHECK_EMPTY(m.response_result);
  CHECK_EMPTY(m.response_error);
  CHECK(m.batch_len == 0);
  CHECK(m.error_code == 0);
  CHECK_EMPTY(m.error_message);
  CHECK_EMPTY(m.error_reason);
  CHECK_EMPTY(m.error_field);
  CHECK_EMPTY(m.error_data);
  CHECK_EMPTY(m.error_response);

  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"update\",\"params\":{\"a\":1}}");
  CHECK(m.kind == SWB_KIND_NOTIFICATION);
  CHECK_SLICE(m.method, "update");
  CHECK_SLICE(m.params, "{\"a\":1}");
  CHECK_EMPTY(m.id);

  /* params null is absent; id null is a request with id null */
  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":null,\"id\":null}");
  CHECK(m.kind == SWB_KIND_REQUEST);
  CHECK_SLICE(m.id, "null");
  CHECK_EMPTY(m.params);

  /* escaped method names arrive unescaped, in the classifier's memory */
  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"su\\u0062tract\",\"id\":\"\\u0041\"}");
  CHECK(m.kind == SWB_KIND_REQUEST);
  CHECK_SLICE(m.method, "subtract");
  CHECK(m.method_exact);
  CHECK_SLICE(m.id, "\"\\u0041\"");
  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"\\ud800\",\"id\":1}");
  CHECK(m.kind == SWB_KIND_REQUEST);
  CHECK(!m.method_exact);

  m = classify(c, "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":\"r\"}");
  CHECK(m.kind == SWB_KIND_RESPONSE);
  CHECK_SLICE(m.id, "\"r\"");
  CHECK_SLICE(m.response_result, "null");
  CHECK_EMPTY(m.response_error);
  CHECK_EMPTY(m.method);

  m = classify(c, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-1,\"message\":\"no\"},\"id\":3}");
  CHECK(m.kind == SWB_KIND_RESPONSE);
  CHECK_SLICE(m.response_error, "{\"code\":-1,\"message\":\"no\"}");
  CHECK_EMPTY(m.response_result);
}

static void errors(swb_classifier *c) {
  swb_message m;
  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":\"x\"}");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK(m.error_code == -32600);
  CHECK_SLICE(m.error_message, "Invalid Request");
  CHECK_SLICE(m.error_reason, "must be a string");
  CHECK_SLICE(m.error_field, "method");
  CHECK_SLICE(m.id, "\"x\"");
  CHECK_SLICE(m.error_data, "{\"field\":\"method\",\"reason\":\"must be a string\"}");
  CHECK_SLICE(m.error_response,
              "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\","
              "\"data\":{\"field\":\"method\",\"reason\":\"must be a string\"}},\"id\":\"x\"}");
  CHECK_EMPTY(m.method);

  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK(m.error_code == -32700);
  CHECK_SLICE(m.error_message, "Parse error");
  CHECK_SLICE(m.error_reason, "unexpected end of input");
  CHECK_EMPTY(m.error_field);
  CHECK_SLICE(m.id, "null");
  CHECK(bytes_starts_with(m.error_data.ptr, m.error_data.len, "{\"reason\":\"unexpected end of input\",\"offset\":"));
  CHECK(bytes_starts_with(m.error_response.ptr, m.error_response.len,
                          "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error\",\"data\":{"));
  /* error_data is inside error_response */
  CHECK(m.error_data.ptr > m.error_response.ptr &&
        m.error_data.ptr + m.error_data.len < m.error_response.ptr + m.error_response.len);

  m = classify(c, "[]");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK(m.error_code == -32600);
  CHECK_SLICE(m.error_reason, "empty batch");
  CHECK_SLICE(m.error_response,
              "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\","
              "\"data\":{\"reason\":\"empty batch\"}},\"id\":null}");

  m = classify(c, "\"just a string\"");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK_SLICE(m.error_reason, "must be an object");

  /* zero length, NULL pointer: the empty message */
  CHECK_OK(swb_classifier_classify(c, NULL, 0, &m));
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK(m.error_code == -32700);
  CHECK_SLICE(m.error_reason, "empty message");
}

static void batches(swb_classifier *c) {
  swb_message m, e;
  size_t i;
  const char *batch =
      "[{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[1,2,4],\"id\":\"1\"},"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notify_hello\",\"params\":[7]},"
      "{\"foo\":\"boo\"},"
      "{\"jsonrpc\":\"2.0\",\"result\":7,\"id\":9},"
      "{\"jsonrpc\":\"2.0\",\"method\":\"m\\u0065\",\"id\":2},"
      "5,"
      "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"bad\",\"id\":{}}]";

  m = classify(c, batch);
  CHECK(m.kind == SWB_KIND_BATCH);
  CHECK(m.batch_len == 7);
  CHECK_EMPTY(m.method);
  CHECK(m.error_code == 0);

  CHECK_OK(swb_classifier_batch_get(c, 0, &e));
  CHECK(e.kind == SWB_KIND_REQUEST);
  CHECK_SLICE(e.method, "sum");
  CHECK_SLICE(e.id, "\"1\"");
  CHECK_SLICE(e.params, "[1,2,4]");

  CHECK_OK(swb_classifier_batch_get(c, 1, &e));
  CHECK(e.kind == SWB_KIND_NOTIFICATION);
  CHECK_SLICE(e.method, "notify_hello");

  CHECK_OK(swb_classifier_batch_get(c, 2, &e));
  CHECK(e.kind == SWB_KIND_ERROR);
  CHECK(e.error_code == -32600);
  CHECK_SLICE(e.error_field, "jsonrpc");
  CHECK_SLICE(e.error_reason, "is missing");
  CHECK_SLICE(e.error_response,
              "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\","
              "\"data\":{\"field\":\"jsonrpc\",\"reason\":\"is missing\"}},\"id\":null}");

  CHECK_OK(swb_classifier_batch_get(c, 3, &e));
  CHECK(e.kind == SWB_KIND_RESPONSE);
  CHECK_SLICE(e.response_result, "7");

  CHECK_OK(swb_classifier_batch_get(c, 4, &e));
  CHECK(e.kind == SWB_KIND_REQUEST);
  CHECK_SLICE(e.method, "me");

  CHECK_OK(swb_classifier_batch_get(c, 5, &e));
  CHECK(e.kind == SWB_KIND_ERROR);
  CHECK_SLICE(e.error_reason, "must be an object");

  CHECK_OK(swb_classifier_batch_get(c, 6, &e));
  CHECK(e.kind == SWB_KIND_ERROR);
  CHECK_SLICE(e.id, "null");

  /* every element again, in a loop; the views stay valid across batch_get calls */
  {
    swb_message first;
    CHECK_OK(swb_classifier_batch_get(c, 0, &first));
    for (i = 0; i < m.batch_len; i++) {
      CHECK_OK(swb_classifier_batch_get(c, i, &e));
      CHECK(e.kind != SWB_KIND_BATCH);
    }
    CHECK_SLICE(first.method, "sum");
  }
  e.kind = 77;
  CHECK_RC(swb_classifier_batch_get(c, 7, &e), SWB_RESULT_INDEX_OUT_OF_RANGE);
  CHECK_RC(swb_classifier_batch_get(c, (size_t)-1, &e), SWB_RESULT_INDEX_OUT_OF_RANGE);
  CHECK(e.kind == 77); /* untouched on failure */

  /* a single message next: no batch any more */
  classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}");
  CHECK_RC(swb_classifier_batch_get(c, 0, &e), SWB_RESULT_NOT_A_BATCH);

  /* a batch of only errors: each with its own response */
  m = classify(c, "[1,\"two\",[3]]");
  CHECK(m.kind == SWB_KIND_BATCH);
  CHECK(m.batch_len == 3);
  for (i = 0; i < 3; i++) {
    CHECK_OK(swb_classifier_batch_get(c, i, &e));
    CHECK(e.kind == SWB_KIND_ERROR);
    CHECK_SLICE(e.error_response,
                "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\","
                "\"data\":{\"reason\":\"must be an object\"}},\"id\":null}");
  }
}

static void big_batch(swb_classifier *c) {
  /* 1000 elements (the default limit), half of them errors: views stay right
   * although the classifier's memory grows while they are made */
  static char buf[1000 * 64];
  size_t n = 0, i;
  swb_message m, e;
  buf[n++] = '[';
  for (i = 0; i < 1000; i++) {
    if (i) buf[n++] = ',';
    if (i % 2)
      n += (size_t)sprintf(buf + n, "{\"jsonrpc\":\"2.0\",\"method\":%u,\"id\":%u}", (unsigned)i, (unsigned)i);
    else
      n += (size_t)sprintf(buf + n, "{\"jsonrpc\":\"2.0\",\"method\":\"m%u\",\"id\":%u}", (unsigned)i, (unsigned)i);
  }
  buf[n++] = ']';
  CHECK_OK(swb_classifier_classify(c, (const uint8_t *)buf, n, &m));
  CHECK(m.kind == SWB_KIND_BATCH);
  CHECK(m.batch_len == 1000);
  for (i = 0; i < 1000; i++) {
    char id[16], resp[200];
    CHECK_OK(swb_classifier_batch_get(c, i, &e));
    sprintf(id, "%u", (unsigned)i);
    CHECK_SLICE(e.id, id);
    if (i % 2) {
      CHECK(e.kind == SWB_KIND_ERROR);
      sprintf(resp, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\","
                    "\"data\":{\"field\":\"method\",\"reason\":\"must be a string\"}},\"id\":%u}", (unsigned)i);
      CHECK_SLICE(e.error_response, resp);
    } else {
      CHECK(e.kind == SWB_KIND_REQUEST);
    }
  }
  /* one more element than the limit */
  buf[n - 1] = ',';
  n += (size_t)sprintf(buf + n, "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]");
  CHECK_OK(swb_classifier_classify(c, (const uint8_t *)buf, n, &m));
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK_SLICE(m.error_data, "{\"reason\":\"batch longer than max_batch_len\",\"limit\":1000}");
}

static void limits(void) {
  swb_config *cfg = NULL;
  swb_classifier *c = NULL;
  swb_message m;
  CHECK_OK(swb_config_new(&cfg));
  CHECK_OK(swb_config_set_max_depth(cfg, 2));
  CHECK_OK(swb_config_set_max_batch_len(cfg, 1));
  CHECK_OK(swb_config_set_max_message_bytes(cfg, 64));
  CHECK_OK(swb_classifier_new(cfg, &c));
  CHECK_OK(swb_config_set_max_depth(cfg, 100)); /* the classifier kept its copy */
  swb_config_free(cfg);

  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[1],\"id\":1}");
  CHECK(m.kind == SWB_KIND_REQUEST);
  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[[1]],\"id\":1}");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK(m.error_code == -32700);
  CHECK_SLICE(m.error_reason, "nesting deeper than max_depth");
  m = classify(c, "[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]");
  CHECK(m.kind == SWB_KIND_BATCH);
  m = classify(c, "[{\"jsonrpc\":\"2.0\",\"method\":\"m\"},{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK_SLICE(m.error_data, "{\"reason\":\"batch longer than max_batch_len\",\"limit\":1}");
  m = classify(c, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[1,2,3,4,5,6,7,8,9,10,11,12],\"id\":1}");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK(m.error_code == -32600);
  CHECK_SLICE(m.error_data, "{\"reason\":\"message larger than max_message_bytes\",\"limit\":64}");
  swb_classifier_free(c);

  CHECK_OK(swb_config_new(&cfg));
  CHECK_OK(swb_config_set_allow_batches(cfg, 0));
  CHECK_OK(swb_classifier_new(cfg, &c));
  swb_config_free(cfg);
  m = classify(c, "[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]");
  CHECK(m.kind == SWB_KIND_ERROR);
  CHECK_SLICE(m.error_reason, "batches are disabled");
  swb_classifier_free(c);
}

int main(void) {
  swb_classifier *c = NULL;
  CHECK_OK(swb_classifier_new(NULL, &c)); /* NULL config: SPEC.md's defaults */
  CHECK(c != NULL);
  kinds(c);
  errors(c);
  batches(c);
  big_batch(c);
  kinds(c); /* the same classifier, reused */
  swb_classifier_free(c);
  limits();
  return harness_finish("test_classifier");
}
