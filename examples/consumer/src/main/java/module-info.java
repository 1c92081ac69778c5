/** A project that depends on ringstore, as README's "Use it from Maven" describes. */
module com.example.consumer {
    requires io.ringstore;
}
