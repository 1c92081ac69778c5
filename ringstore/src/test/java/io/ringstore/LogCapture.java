package io.ringstore;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The lines logged through {@link System.Logger} under one logger name while open (the default
 * System.Logger backend is java.util.logging): level and formatted message, e.g. "SEVERE x: failed".
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private final Logger logger;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final SimpleFormatter formatter = new SimpleFormatter();

    public LogCapture(Class<?> loggingClass) {
        logger = Logger.getLogger(loggingClass.getName());
        logger.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.INFO.intValue()) {
            lines.add(r.getLevel() + " " + formatter.formatMessage(r));
        }
    }

    /** The lines so far. */
    public List<String> lines() {
        return List.copyOf(lines);
    }

    /** The lines so far that contain {@code text}. */
    public List<String> containing(String text) {
        return lines.stream().filter(l -> l.contains(text)).toList();
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
