// The core's log events in java.util.logging.
package a2anative

import java.util.logging.Level
import java.util.logging.Logger

/**
 * From now on the core's log events go to java.util.logging (and so to SLF4J or Log4j through
 * their JUL bridges), each to the logger its Rust target names (`a2a_native.task.manager`), at
 * the level the `a2a_native` logger allows when this is called (call it again after changing
 * that level). Without it, warnings and errors go to standard error. `setLogSink` takes any
 * other [LogSink].
 */
fun useJavaLogging() {
    val level = generateSequence(Logger.getLogger("a2a_native")) { it.parent }.firstNotNullOfOrNull { it.level }
    setLogSink(JavaLogging, (level ?: Level.INFO).toLogLevel())
}

private fun Level.toLogLevel(): LogLevel? = when {
    this == Level.OFF -> null
    intValue() >= Level.SEVERE.intValue() -> LogLevel.ERROR
    intValue() >= Level.WARNING.intValue() -> LogLevel.WARN
    intValue() >= Level.INFO.intValue() -> LogLevel.INFO
    intValue() >= Level.FINE.intValue() -> LogLevel.DEBUG
    else -> LogLevel.TRACE
}

private object JavaLogging : LogSink {
    override fun log(logger: String, level: LogLevel, text: String) {
        val julLevel = when (level) {
            LogLevel.ERROR -> Level.SEVERE
            LogLevel.WARN -> Level.WARNING
            LogLevel.INFO -> Level.INFO
            LogLevel.DEBUG -> Level.FINE
            LogLevel.TRACE -> Level.FINER
        }
        // Named as its Rust target, not as this bridge; a handler's failure stays in the JVM.
        runCatching { Logger.getLogger(logger).logp(julLevel, logger, null, text) }
    }
}
