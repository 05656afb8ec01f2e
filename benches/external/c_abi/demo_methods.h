/* The demo methods of switchboard-server as C callbacks (demo_methods.c). */
#ifndef SWB_EXTERNAL_DEMO_METHODS_H
#define SWB_EXTERNAL_DEMO_METHODS_H

#include <stdint.h>

#include "switchboard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How many of each notification arrived. */
typedef struct {
  uint64_t update, hello, sum;
} demo_counters;

/* Registers subtract, sum, get_data, eth_getBalance, tools/call and the three notifications
 * (counted in `counters`, which must outlive the router); returns the first failure. */
swb_result demo_register(swb_router_builder *b, demo_counters *counters);

#ifdef __cplusplus
}
#endif

#endif
