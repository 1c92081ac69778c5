package io.ringstore.builder;

import io.ringstore.family.RingVersion;
import java.nio.file.Path;
import java.util.List;

/**
 * What a build wrote.
 *
 * @param path            the ring file
 * @param generation      its generation number
 * @param backends        backends in the file
 * @param features        feature names
 * @param versions        ring versions in the file
 * @param rings           index entries (versions × 2^features)
 * @param segments        distinct point segments written (rings with identical backend sets share one)
 * @param views           rings stored as views of their version's ring of all backends ({@link Views})
 * @param emptyRings      rings with no backend
 * @param points          points in all segments (after dropping colliding hashes; a segment that views read keeps them)
 * @param collisions      points dropped because another backend produced the same hash, over all segments
 * @param fileBytes       size of the file
 * @param nanos           wall time of the build, parse excluded
 * @param leftoversRemoved temporary files of the target left by builds that died, deleted by this one
 */
public record BuildResult(
        Path path,
        long generation,
        int backends,
        List<String> features,
        List<RingVersion> versions,
        int rings,
        int segments,
        int views,
        int emptyRings,
        long points,
        long collisions,
        long fileBytes,
        long nanos,
        List<String> leftoversRemoved) {
    /** {@return file bytes per stored point (6 plus the overhead of header, tables and alignment)} */
    public double bytesPerPoint() {
        return points == 0 ? Double.NaN : (double) fileBytes / points;
    }
}
