#include <malloc.h>
#include <string.h>

#include "ccurl.h"
#include "cstartup.h"

/* `cenariusd sync` from a timer is held to ≤ 10 ms beyond its one round trip (B2), and about as
   much again goes to dynamically loading libcurl's dependency tree. Starting that load here,
   before the Swift runtime and the command line are set up, overlaps the two; by the time the
   Swift side asks for libcurl it is mostly there. glibc passes argc and argv to constructors.
   Only commands that download from a remote start it: resolve, routes and verify never pay.

   The same commands keep to one malloc arena. glibc gives each thread that allocates an arena of
   its own (the download loops, the hash workers, the loader), and each keeps the pages of the
   bodies freed in it: with one arena a B1 seed peaks at 36.6 MiB instead of 39.0 (median of 8
   alternating seeds; F's bar is 40) in the same time. The daemon keeps glibc's default for its
   event loops' threads. */
__attribute__((constructor(101))) static void prepare_for_downloads(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "sync") != 0 && strcmp(argv[1], "seed") != 0)) return;
    mallopt(M_ARENA_MAX, 1);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--develop") == 0) return;
    }
    ccurl_load_in_background();
}
