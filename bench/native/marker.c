/* A marker around the simulation phase for callgrind (valgrind --tool=callgrind
 * --instr-atstart=no): instructions are counted only between the two calls.
 * Outside valgrind the client requests are a few no-op instructions.
 * bench/harness_driver.py calls these through ctypes; bench/native/main.cc
 * uses the same macros directly. */
#include <valgrind/callgrind.h>

void
bench_phase_start(void)
{
    CALLGRIND_START_INSTRUMENTATION;
}

void
bench_phase_stop(void)
{
    CALLGRIND_STOP_INSTRUMENTATION;
}
