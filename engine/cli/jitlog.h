/* jitlog.h — the command's side of jit's reports (core/jit.h jit_reporter): a failed compile's log
 * and numbered pasted source on stderr, as a banner per compile, and a damaged or unwritable cache
 * entry as one line. The library sets no reporter; only the command prints. */
#ifndef ENGINE_JITLOG_H
#define ENGINE_JITLOG_H

#include <stdbool.h>

/* Report on stderr from now on; quiet: the cache's warnings only, no compile logs (a tune logs
 * hundreds of points, warm's summary counts failures: their err's first line says enough). */
void jitlog_init(bool quiet);

#endif
