package io.ringstore.tools.analysis;

import io.ringstore.Backend;
import io.ringstore.builder.BackendList;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a one-version ring file of a backend list would hold at a given point multiple, without
 * building it: every feature ring with its expected point count (collisions dropped as
 * {@link CollisionModel} expects), and the file length laid out as the ring builder lays it out
 * (FORMAT.md: metadata and its CRC, then one segment per distinct member set in feature-mask order,
 * each aligned by its length).
 */
public record RingFileEstimate(List<RingEstimate> rings, List<RingEstimate> segments, long fileBytes) {
    /**
     * One ring.
     *
     * @param features       the ring's feature set
     * @param ring           its members and predictions (no members: an empty ring)
     * @param expectedPoints points expected after equal hashes are dropped, rounded
     */
    public record RingEstimate(Set<String> features, FleetRing ring, long expectedPoints) {
        public long bytes() {
            return expectedPoints * RingFileDescriptor.POINT_LENGTH;
        }
    }

    public static RingFileEstimate of(BackendList list, RingVersion version) {
        List<String> features = list.features();
        Map<List<Backend>, RingEstimate> bySet = new LinkedHashMap<>();
        List<RingEstimate> rings = new ArrayList<>();
        for (int mask = 0; mask < 1 << features.size(); mask++) {
            Set<String> set = new LinkedHashSet<>();
            for (int f = 0; f < features.size(); f++) {
                if ((mask & (1 << f)) != 0) {
                    set.add(features.get(f));
                }
            }
            List<Backend> members = FleetRing.members(list.backends(), set);
            RingEstimate shared = bySet.computeIfAbsent(members, m -> {
                FleetRing r = FleetRing.of(m, version);
                return new RingEstimate(
                        Set.of(), r, m.isEmpty() ? 0 : Math.round(r.model().expectedPoints()));
            });
            rings.add(new RingEstimate(Collections.unmodifiableSet(set), shared.ring(), shared.expectedPoints()));
        }
        long metadata = RingFileDescriptor.HEADER_LENGTH + (long) rings.size() * RingFileDescriptor.ENTRY_LENGTH;
        for (Backend b : list.backends()) {
            metadata +=
                    RingFileDescriptor.BACKEND_FIXED_LENGTH + b.address().getBytes(StandardCharsets.US_ASCII).length;
        }
        for (String f : features) {
            metadata += 1 + f.getBytes(StandardCharsets.US_ASCII).length;
        }
        long position = metadata + RingFileDescriptor.METADATA_CRC_LENGTH; // each segment aligns itself
        List<RingEstimate> segments = new ArrayList<>();
        for (RingEstimate s : bySet.values()) {
            if (s.expectedPoints() > 0) {
                segments.add(s);
                long length = s.bytes();
                position = RingFileDescriptor.align(position, RingFileDescriptor.alignmentFor(length)) + length;
            }
        }
        return new RingFileEstimate(List.copyOf(rings), List.copyOf(segments), position);
    }
}
