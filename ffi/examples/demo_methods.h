/* The methods the C examples serve, registered on a router builder:
 *   subtract [a, b]   -> a - b          (integers; -32602 otherwise)
 *   echo     params   -> params as given (null when absent)
 *   hello             -> "hello, world"
 *   fail              -> an application error with data
 *   update   (notification) counts calls
 * A real server would read params with its JSON library (cJSON, jansson, yyjson...):
 * switchboard hands over the exact, already validated bytes. */
#ifndef SWB_DEMO_METHODS_H
#define SWB_DEMO_METHODS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchboard.h"

static int demo_subtract(void *user_data, const swb_call *call, swb_writer *w) {
  /* params are validated JSON, but not NUL-terminated: copy small ones to read them */
  char buf[64];
  long long a, b;
  char end;
  (void)user_data;
  if (call->params.len == 0 || call->params.len >= sizeof buf) goto invalid;
  memcpy(buf, call->params.ptr, call->params.len);
  buf[call->params.len] = 0;
  if (sscanf(buf, " [ %lld , %lld %c", &a, &b, &end) != 3 || end != ']') goto invalid;
  return (int)swb_writer_int64(w, a - b);
invalid : {
  static const char msg[] = "Invalid params";
  static const char data[] = "{\"field\":\"params\",\"reason\":\"expected [integer, integer]\"}";
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
