package com.example.spymemcached;

import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionObserver;
import net.spy.memcached.FailureMode;
import net.spy.memcached.HashAlgorithm;
import net.spy.memcached.MemcachedConnection;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.OperationFactory;
import net.spy.memcached.auth.AuthDescriptor;
import net.spy.memcached.metrics.MetricCollector;
import net.spy.memcached.metrics.MetricType;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.transcoders.Transcoder;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;

/**
 * A spymemcached {@link ConnectionFactory} that is another factory with its node locator replaced: every
 * setting (protocol, timeouts, transcoder, failure mode, queues, executor, authentication, metrics) is
 * {@code base}'s, typically one {@code new ConnectionFactoryBuilder()...build()} made, and
 * {@link #createLocator} is {@code locators}'. {@code ConnectionFactoryBuilder} has no setting for a
 * locator of one's own, hence this.
 *
 * <p>{@link #createConnection} makes the {@link MemcachedConnection} itself, as
 * {@code DefaultConnectionFactory} does, but handing it this factory: the connection asks its factory
 * for the locator. A {@code base} that overrides {@code createConnection} loses that override.
 */
public final class LocatorConnectionFactory implements ConnectionFactory {
    private final ConnectionFactory base;
    private final Function<List<MemcachedNode>, NodeLocator> locators;

    /**
     * A factory with {@code base}'s settings and {@code locators}' locator.
     *
     * @param base     where every setting comes from
     * @param locators makes the locator over the client's nodes, once per connection
     */
    public LocatorConnectionFactory(ConnectionFactory base, Function<List<MemcachedNode>, NodeLocator> locators) {
        this.base = Objects.requireNonNull(base, "base");
        this.locators = Objects.requireNonNull(locators, "locators");
    }

    /** {@return the locator {@code locators} makes over the client's nodes} */
    @Override
    public NodeLocator createLocator(List<MemcachedNode> nodes) {
        return locators.apply(nodes);
    }

    /** {@return a connection to {@code addrs} that takes its locator and settings from this factory} */
    @Override
    public MemcachedConnection createConnection(List<InetSocketAddress> addrs) throws IOException {
        return new MemcachedConnection(getReadBufSize(), this, addrs, getInitialObservers(), getFailureMode(), getOperationFactory());
    }

    /** {@return {@code base}'s node} */
    @Override
    public MemcachedNode createMemcachedNode(SocketAddress sa, SocketChannel c, int bufSize) {
        return base.createMemcachedNode(sa, c, bufSize);
    }

    /** {@return {@code base}'s queue} */
    @Override
    public BlockingQueue<Operation> createOperationQueue() {
        return base.createOperationQueue();
    }

    /** {@return {@code base}'s queue} */
    @Override
    public BlockingQueue<Operation> createReadOperationQueue() {
        return base.createReadOperationQueue();
    }

    /** {@return {@code base}'s queue} */
    @Override
    public BlockingQueue<Operation> createWriteOperationQueue() {
        return base.createWriteOperationQueue();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public long getOpQueueMaxBlockTime() {
        return base.getOpQueueMaxBlockTime();
    }

    /** {@return {@code base}'s executor} */
    @Override
    public ExecutorService getListenerExecutorService() {
        return base.getListenerExecutorService();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public boolean isDefaultExecutorService() {
        return base.isDefaultExecutorService();
    }

    /** {@return {@code base}'s operation factory (its protocol)} */
    @Override
    public OperationFactory getOperationFactory() {
        return base.getOperationFactory();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public long getOperationTimeout() {
        return base.getOperationTimeout();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public boolean isDaemon() {
        return base.isDaemon();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public boolean useNagleAlgorithm() {
        return base.useNagleAlgorithm();
    }

    /** {@return {@code base}'s observers} */
    @Override
    public Collection<ConnectionObserver> getInitialObservers() {
        return base.getInitialObservers();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public FailureMode getFailureMode() {
        return base.getFailureMode();
    }

    /** {@return {@code base}'s transcoder} */
    @Override
    public Transcoder<Object> getDefaultTranscoder() {
        return base.getDefaultTranscoder();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public boolean shouldOptimize() {
        return base.shouldOptimize();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public int getReadBufSize() {
        return base.getReadBufSize();
    }

    /** {@return {@code base}'s hash (the locator here need not use it)} */
    @Override
    public HashAlgorithm getHashAlg() {
        return base.getHashAlg();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public long getMaxReconnectDelay() {
        return base.getMaxReconnectDelay();
    }

    /** {@return {@code base}'s authentication} */
    @Override
    public AuthDescriptor getAuthDescriptor() {
        return base.getAuthDescriptor();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public int getTimeoutExceptionThreshold() {
        return base.getTimeoutExceptionThreshold();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public MetricType enableMetrics() {
        return base.enableMetrics();
    }

    /** {@return {@code base}'s collector} */
    @Override
    public MetricCollector getMetricCollector() {
        return base.getMetricCollector();
    }

    /** {@return {@code base}'s setting} */
    @Override
    public long getAuthWaitTime() {
        return base.getAuthWaitTime();
    }

    @Override
    public String toString() {
        return "LocatorConnectionFactory(" + base + ")";
    }
}
