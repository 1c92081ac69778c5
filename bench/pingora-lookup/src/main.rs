//! pingora-ketama's lookups timed on ringstore's benchmark fleet and keys (bench/README.md,
//! PingoraLookupMeasure): 2,048 backends 127.1.x.y:8080 x weight 10, v1 and v2:16, from the key
//! (CRC-32 then search) and from a precomputed CRC-32. Prints one line per round and side:
//! `rust SIDE ROUND ns CHECKSUM`, the checksum being the sum of the node indexes found.
use pingora_ketama::{Bucket, Continuum, Version};
use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Instant;

fn read_keys(path: &str) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).expect("keys file");
    let count = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
    let mut keys = Vec::with_capacity(count);
    let mut at = 4;
    for _ in 0..count {
        let len = u16::from_be_bytes(data[at..at + 2].try_into().unwrap()) as usize;
        at += 2;
        keys.push(data[at..at + len].to_vec());
        at += len;
    }
    keys
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let keys = read_keys(&args[1]);
    let rounds: usize = args.get(2).map_or(5, |r| r.parse().unwrap());
    let buckets: Vec<Bucket> = (0..2048u32)
        .map(|i| {
            let addr: SocketAddr = format!("127.1.{}.{}:8080", i >> 8, i & 0xFF).parse().unwrap();
            Bucket::new(addr, 10)
        })
        .collect();
    let rings = [
        ("v1", Continuum::new_with_version(&buckets, Version::V1)),
        ("v2:16", Continuum::new_with_version(&buckets, Version::V2 { point_multiple: 16 })),
    ];
    let hashes: Vec<u32> = keys.iter().map(|k| crc32fast::hash(k)).collect();
    for round in 1..=rounds {
        let start = Instant::now();
        let mut sum = 0u64;
        for k in &keys {
            sum += black_box(crc32fast::hash(black_box(k))) as u64;
        }
        let ns = start.elapsed().as_nanos() as f64 / keys.len() as f64;
        println!("rust crc {round} {ns:.2} {sum}");
        for (name, ring) in &rings {
            let start = Instant::now();
            let mut sum = 0usize;
            for &h in &hashes {
                sum += black_box(ring.node_index_of_hash(black_box(h))).unwrap();
            }
            let ns = start.elapsed().as_nanos() as f64 / hashes.len() as f64;
            println!("rust {name}-hash {round} {ns:.2} {sum}");
            let start = Instant::now();
            let mut sum = 0usize;
            for k in &keys {
                sum += black_box(ring.node_index(black_box(k))).unwrap();
            }
            let ns = start.elapsed().as_nanos() as f64 / keys.len() as f64;
            println!("rust {name}-key {round} {ns:.2} {sum}");
        }
    }
}
