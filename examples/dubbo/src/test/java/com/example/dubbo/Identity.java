package com.example.dubbo;

/** The test service: each provider answers its own address, whatever it is asked. */
public interface Identity {
    /** {@return the answering provider's {@code host:port}} Dubbo's default key: {@code key}. */
    String who(String key);

    /** {@return the answering provider's {@code host:port}} Keyed by {@code hash.arguments=1,0} in the tests: {@code n} then {@code key}. */
    String who2(String key, int n);
}
