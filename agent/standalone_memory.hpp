// The standalone prolog's use of its memory and of the ledger (agent/prolog_memory.hpp,
// ledger/ledger.hpp): before the checks, reuse a cached pass or plan the checks for the budget;
// after them, remember the results and record them in the ledger (kind prolog). A ledger that
// cannot be opened or written is logged and named in the outcome; it never changes the verdict or
// the exit code.
#pragma once

#include "agent/standalone.hpp"  // PrologPlan, prepare_prolog, finish_prolog
