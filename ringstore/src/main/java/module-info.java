/**
 * ringstore: consistent-hash rings built offline into one file and memory-mapped by routers.
 * Only {@code io.ringstore} is API.
 */
module io.ringstore {
    exports io.ringstore;
}
