#ifndef DBLOAD_CLI_EXIT_CODES_H_
#define DBLOAD_CLI_EXIT_CODES_H_

// The exit codes are defined once, in process/exit_codes.h (the daemons use them too); this
// name stays for the integration tests that hold `dbload` to them.
#include "process/exit_codes.h"  // IWYU pragma: export

#endif  // DBLOAD_CLI_EXIT_CODES_H_
