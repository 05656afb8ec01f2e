/* The methods the C examples serve, registered on a router builder:
 *   subtract [a, b] or {"minuend": a, "subtrahend": b}
 *                     -> a - b          (integers; -32602 otherwise)
 *   echo     params   -> params as given (null when absent)
 *   hello             -> "hello, world"
 *   fail              -> an application error with data
 *   update   (notification) counts calls
 * Params are read in place with the swb_value_* readers (no JSON library, no copy):
 * switchboard hands over views of the exact, already validated bytes. */
#ifndef SWB_DEMO_METHODS_H
#define SWB_DEMO_METHODS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchboard.h"

static int demo_subtract(void *user_data, const swb_call *call, swb_writer *w) {
  swb_value params, a, b, extra;
  swb_value_iter it;
  int64_t x, y;
  (void)user_data;
  if (swb_call_params(call, &params) != SWB_RESULT_OK) goto invalid;
  if (params.kind == SWB_VALUE_KIND_ARRAY) {
    /* positional: exactly two elements */
    if (swb_value_iterate(&params, &it) != SWB_RESULT_OK ||
        swb_value_iter_next(&it, NULL, &a) != SWB_RESULT_OK ||
        swb_value_iter_next(&it, NULL, &b) != SWB_RESULT_OK ||
        swb_value_iter_next(&it, NULL, &extra) != SWB_RESULT_ITER_END)
      goto invalid;
  } else if (params.kind == SWB_VALUE_KIND_OBJECT) {
    /* named: looked up by key (compared after unescaping) */
    if (swb_value_get(&params, "minuend", 7, &a) != SWB_RESULT_OK ||
        swb_value_get(&params, "subtrahend", 10, &b) != SWB_RESULT_OK)
      goto invalid;
  } else {
    goto invalid; /* no params */
  }
  /* integers only (1.0 and 1e2 are refused), and a difference that fits */
  if (swb_value_as_int64(&a, &x) != SWB_RESULT_OK || swb_value_as_int64(&b, &y) != SWB_RESULT_OK)
    goto invalid;
  if ((y < 0 && x > INT64_MAX + y) || (y > 0 && x < INT64_MIN + y)) goto invalid;
  return (int)swb_writer_int64(w, x - y);
invalid : {
  static const char msg[] = "Invalid params";
  static const char data[] =
      "{\"field\":\"params\",\"reason\":\"expected [integer, integer] or {minuend, subtrahend}\"}";
  return (int)swb_writer_error(w, -32602, msg, sizeof msg - 1, data, sizeof data - 1);
}
}

static int demo_echo(void *user_data, const swb_call *call, swb_writer *w) {
  (void)user_data;
  if (call->params.len == 0) return (int)swb_writer_null(w);
  return (int)swb_writer_raw_json(w, (const char *)call->params.ptr, call->params.len);
}

static int demo_hello(void *user_data, const swb_call *call, swb_writer *w) {
  static const char s[] = "hello, world";
  (void)user_data;
  (void)call;
  return (int)swb_writer_string(w, s, sizeof s - 1);
}

static int demo_fail(void *user_data, const swb_call *call, swb_writer *w) {
  static const char msg[] = "insufficient funds";
  static const char data[] = "{\"balance\":0}";
  (void)user_data;
  (void)call;
  return (int)swb_writer_error(w, 1001, msg, sizeof msg - 1, data, sizeof data - 1);
}

static void demo_update(void *user_data, const swb_call *call) {
  (void)call;
  if (user_data) (*(unsigned long *)user_data)++;
}

/* Registers the demo methods; returns the first failure. `updates` (may be NULL)
 * counts update notifications: with a router shared by threads, make it atomic. */
static swb_result demo_register(swb_router_builder *b, unsigned long *updates) {
  swb_result rc;
  if ((rc = swb_router_builder_method(b, "subtract", 8, demo_subtract, NULL, NULL))) return rc;
  if ((rc = swb_router_builder_method(b, "echo", 4, demo_echo, NULL, NULL))) return rc;
  if ((rc = swb_router_builder_method(b, "hello", 5, demo_hello, NULL, NULL))) return rc;
  if ((rc = swb_router_builder_method(b, "fail", 4, demo_fail, NULL, NULL))) return rc;
  return swb_router_builder_notification(b, "update", 6, demo_update, updates, NULL);
}

/* Exits with the result code's text when rc is not SWB_RESULT_OK. */
static void demo_check(swb_result rc, const char *what) {
  if (rc != SWB_RESULT_OK) {
    fprintf(stderr, "%s: %s\n", what, swb_result_str(rc));
    exit(1);
  }
}

#endif
