//! The drop queue between a transport callback and a slow writer.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use bag::DropQueue;

#[test]
fn a_stalled_consumer_never_blocks_the_producer_and_every_loss_is_counted() {
    let queue = Arc::new(DropQueue::<u64>::new(1_000, 1 << 30));
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let consumer_queue = Arc::clone(&queue);
    let consumer = std::thread::spawn(move || {
        // The disk is stuck until the producer has finished.
        release_rx.recv().ok();
        let mut got = Vec::new();
        while let Some(v) = consumer_queue.pop_timeout(Duration::from_millis(200)) {
            got.push(v);
            std::thread::sleep(Duration::from_micros(5)); // and slow afterwards
        }
        got
    });
    let producer_queue = Arc::clone(&queue);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for i in 0..100_000u64 {
            producer_queue.push(i, 64);
        }
        done_tx.send(()).ok();
    });
    // If a push ever waited for the consumer this would time out: the consumer is stalled.
    done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the producer finished while the consumer was stalled");
    release_tx.send(()).unwrap();
    let got = consumer.join().unwrap();
    assert_eq!(got.len(), 1_000, "the newest 1000 were kept");
    assert_eq!(
        got,
        (99_000..100_000).collect::<Vec<_>>(),
        "oldest evicted, order kept"
    );
    assert_eq!(queue.dropped(), 99_000);
    assert_eq!(got.len() as u64 + queue.dropped(), 100_000);
}

#[test]
fn concurrent_producers_lose_nothing_uncounted() {
    let queue = Arc::new(DropQueue::<u64>::new(64, 1 << 20));
    let consumer_queue = Arc::clone(&queue);
    let consumer = std::thread::spawn(move || {
        let mut n = 0u64;
        while consumer_queue
            .pop_timeout(Duration::from_millis(500))
            .is_some()
        {
            n += 1;
        }
        n
    });
    let producers: Vec<_> = (0..4)
        .map(|_| {
            let q = Arc::clone(&queue);
            std::thread::spawn(move || {
                for i in 0..25_000u64 {
                    q.push(i, 100);
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    queue.close();
    let received = consumer.join().unwrap();
    assert_eq!(received + queue.dropped(), 100_000);
}
