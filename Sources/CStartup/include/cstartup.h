#ifndef CSTARTUP_H
#define CSTARTUP_H

/* Nothing to call: this target holds a constructor that runs before Swift's main (startup.c). */

#endif
