import Foundation

/// How a server process (`herald worker`, `herald api`) ends once its services have stopped:
/// the standard streams flushed, then `_exit`, without the process's exit handlers. A Kafka
/// client that a frozen broker held past its deadline is left to itself, its librdkafka threads
/// still inside calls; the library's clean-up at exit ran under them and crashed the process
/// (SIGSEGV in `init_thread_deregister`) after an orderly shutdown. Nothing Herald needs runs
/// in an exit handler: every record was flushed or committed by then.
public enum ProcessEnd {
    public static func afterShutdown(status: Int32 = 0) -> Never {
        fflush(nil)
        _exit(status)
    }
}
