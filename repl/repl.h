/* The interactive REPL (SPEC 9): libedit line editing, history, completion. */
#ifndef TC_REPL_H
#define TC_REPL_H
#include "runner.h"
void repl_run(runner *r, bool quiet);
#endif
