#include <librdkafka/rdkafka.h>

#if defined(__linux__)
/* mallopt(3): HeraldKafka's MallocTuning keeps librdkafka's batch buffers in the heap. */
#include <malloc.h>
#endif
