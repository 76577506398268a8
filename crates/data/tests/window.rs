//! Chunk directories: the numbered writer, skipping of bad files, and window selection.

mod common;

use std::{
    collections::HashSet,
    fs,
    path::Path,
    sync::Arc,
    time::{Duration, SystemTime},
};

use xq_data::{
    ChunkWriter, Window, WindowChunk, WindowLoader, WindowSize, WriterError, encode_chunk,
    io::tmp_path, write_chunk_atomic,
};

fn set_mtime(path: &Path, secs_after_epoch: u64) {
    let f = fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs_after_epoch))
        .unwrap();
}

#[test]
fn writer_numbers_chunks_and_continues_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let chunk = common::random_chunk(10, 1, 8);
    let mut w = ChunkWriter::new(dir.path(), "gpu0").unwrap();
    let a = w.write(&chunk).unwrap();
    let b = w.write(&chunk).unwrap();
    assert_eq!(a.file_name().unwrap(), "gpu0-00000000.xqc");
    assert_eq!(b.file_name().unwrap(), "gpu0-00000001.xqc");
    // Another worker's files do not affect this worker's numbering, and vice versa.
    let mut other = ChunkWriter::new(dir.path(), "gpu0-b").unwrap();
    assert_eq!(
        other.write(&chunk).unwrap().file_name().unwrap(),
        "gpu0-b-00000000.xqc"
    );
    let mut again = ChunkWriter::new(dir.path(), "gpu0").unwrap();
    assert_eq!(
        again.write(&chunk).unwrap().file_name().unwrap(),
        "gpu0-00000002.xqc"
    );
}

#[test]
fn writer_rejects_worker_ids_unfit_for_file_names() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "",
        "a/b",
        "..",
        ".hidden",
        "sp ace",
        "compact-w",
        "x".repeat(65).as_str(),
    ] {
        assert!(
            matches!(
                ChunkWriter::new(dir.path(), bad),
                Err(WriterError::BadWorkerId(_))
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn corrupt_truncated_and_foreign_chunks_are_skipped_with_a_warning_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = common::random_chunk(11, 2, 40);
    write_chunk_atomic(&dir.path().join("w-00000000.xqc"), &good).unwrap();
    let bytes = encode_chunk(&common::random_chunk(12, 2, 40)).unwrap();
    // Truncated: the header is fine, the body is cut (caught from the header alone).
    fs::write(
        dir.path().join("w-00000001.xqc"),
        &bytes[..bytes.len() - 10],
    )
    .unwrap();
    // Bit flip deep in the body: only found when the chunk is loaded.
    let mut flipped = bytes.clone();
    let n = flipped.len();
    flipped[n - 20] ^= 0x10;
    fs::write(dir.path().join("w-00000002.xqc"), &flipped).unwrap();
    // Not a chunk at all.
    fs::write(
        dir.path().join("notes-00000000.xqc"),
        b"hello, this is not a chunk file\n",
    )
    .unwrap();

    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(1_000_000));
    let (window, report) = loader.refresh().unwrap();
    assert_eq!(window.len() as usize, good.records.len());
    assert_eq!(report.window_len, window.len());
    assert_eq!(report.total_records as usize, good.records.len());
    let mut messages: Vec<String> = report.skipped.iter().map(ToString::to_string).collect();
    messages.sort();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    for (msg, name) in
        messages
            .iter()
            .zip(["notes-00000000.xqc", "w-00000001.xqc", "w-00000002.xqc"])
    {
        assert!(msg.contains(name), "{msg} should name {name}");
    }
    assert!(messages[0].contains("bad magic"), "{}", messages[0]);
    assert!(messages[1].contains("truncated"), "{}", messages[1]);
    assert!(messages[2].contains("checksum"), "{}", messages[2]);
    // Bad files are reported once, not at every refresh.
    let (again, report) = loader.refresh().unwrap();
    assert!(report.skipped.is_empty());
    assert_eq!(again.len(), window.len());
}

#[test]
fn a_tmp_file_being_written_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let good = common::random_chunk(13, 1, 30);
    let path = dir.path().join("w-00000000.xqc");
    write_chunk_atomic(&path, &good).unwrap();
    // A half-written chunk, as a crash mid-write leaves it, and a complete one not yet renamed.
    let bytes = encode_chunk(&common::random_chunk(14, 1, 30)).unwrap();
    fs::write(
        tmp_path(&dir.path().join("w-00000001.xqc")),
        &bytes[..bytes.len() / 2],
    )
    .unwrap();
    fs::write(tmp_path(&dir.path().join("w-00000002.xqc")), &bytes).unwrap();
    let (window, report) = WindowLoader::new(dir.path(), WindowSize::Fixed(1 << 20))
        .refresh()
        .unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(window.len() as usize, good.records.len());
    assert_eq!(window.chunks().len(), 1);
}

#[test]
fn fixed_window_takes_exactly_the_newest_records_by_modification_time() {
    let dir = tempfile::tempdir().unwrap();
    let chunks: Vec<_> = (0..4)
        .map(|i| common::random_chunk(20 + i, 1, 25))
        .collect();
    // File names in the opposite order of their times: time decides, not the name.
    for (i, c) in chunks.iter().enumerate() {
        let path = dir.path().join(format!("w-{:08}.xqc", 9 - i));
        write_chunk_atomic(&path, c).unwrap();
        set_mtime(&path, i as u64 * 10);
    }
    let sizes: Vec<u64> = chunks.iter().map(|c| c.records.len() as u64).collect();
    let want = sizes[3] + sizes[2] + 5;
    let (window, report) = WindowLoader::new(dir.path(), WindowSize::Fixed(want))
        .refresh()
        .unwrap();
    assert_eq!(report.total_records, sizes.iter().sum::<u64>());
    assert_eq!(window.len(), want);
    let names: Vec<&str> = window.chunks().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["w-00000008.xqc", "w-00000007.xqc", "w-00000006.xqc"]
    );
    // The oldest chunk contributes only its last 5 records.
    let oldest = &window.chunks()[0];
    assert_eq!(oldest.first, sizes[1] as usize - 5);
    let (_, first_rec) = window.get(0).unwrap();
    assert_eq!(*first_rec, chunks[1].records[sizes[1] as usize - 5]);
    let (_, last_rec) = window.get(want - 1).unwrap();
    assert_eq!(last_rec, chunks[3].records.last().unwrap());
    assert!(window.get(want).is_none());
}

#[test]
fn window_refresh_picks_up_new_chunks_and_drops_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let a = common::random_chunk(30, 1, 20);
    let b = common::random_chunk(31, 1, 20);
    let pa = dir.path().join("w-00000000.xqc");
    write_chunk_atomic(&pa, &a).unwrap();
    set_mtime(&pa, 0);
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(a.records.len() as u64));
    let (w1, _) = loader.refresh().unwrap();
    let pb = dir.path().join("w-00000001.xqc");
    write_chunk_atomic(&pb, &b).unwrap();
    set_mtime(&pb, 100);
    let (w2, report) = loader.refresh().unwrap();
    assert_eq!(
        report.total_records as usize,
        a.records.len() + b.records.len()
    );
    assert_ne!(w1.fingerprint(), w2.fingerprint());
    assert_eq!(w2.chunks().last().unwrap().name, "w-00000001.xqc");
    assert_eq!(w2.get(w2.len() - 1).unwrap().1, b.records.last().unwrap());
}

#[test]
fn power_law_window_follows_the_katago_formula() {
    let rule = WindowSize::default();
    assert_eq!(rule.size(0), 0);
    assert_eq!(rule.size(100_000), 100_000);
    assert_eq!(rule.size(250_000), 250_000);
    // Just past m the window grows at rate r = 0.4 per row (a little less: it is concave).
    let w = rule.size(250_000 + 10_000);
    assert!((253_900..=254_000).contains(&w), "{w}");
    // W(N) = m + r (N^e - m^e) / (e m^(e-1)), computed by hand for N = 10M.
    let (n, m, e, r) = (10_000_000f64, 250_000f64, 0.65f64, 0.4f64);
    let expect = m + r * (n.powf(e) - m.powf(e)) / (e * m.powf(e - 1.0));
    assert_eq!(rule.size(10_000_000), expect as u64);
    assert!(expect > 1_000_000.0 && expect < 2_000_000.0, "{expect}");
    let capped = WindowSize::PowerLaw {
        min_rows: 250_000,
        expand_per_row: 0.4,
        exponent: 0.65,
        max_rows: Some(500_000),
    };
    assert_eq!(capped.size(10_000_000), 500_000);
    assert_eq!(WindowSize::Fixed(7).size(3), 3);
    assert_eq!(WindowSize::Fixed(7).size(30), 7);
}

#[test]
fn in_memory_window_indexes_records_across_chunks() {
    let a = Arc::new(common::random_chunk(40, 1, 10));
    let b = Arc::new(common::random_chunk(41, 1, 10));
    let w = Window::from_chunks(vec![
        WindowChunk {
            name: "a".into(),
            chunk: Arc::clone(&a),
            first: 3,
        },
        WindowChunk {
            name: "b".into(),
            chunk: Arc::clone(&b),
            first: 0,
        },
    ]);
    assert_eq!(w.len() as usize, a.records.len() - 3 + b.records.len());
    assert_eq!(w.get(0).unwrap().1, &a.records[3]);
    let na = (a.records.len() - 3) as u64;
    assert_eq!(w.get(na).unwrap().1, &b.records[0]);
    let same = Window::from_chunks(w.chunks().to_vec());
    assert_eq!(same.fingerprint(), w.fingerprint());
}

#[test]
fn a_manifest_rebuilds_the_same_window_after_new_chunks_arrive() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3u64 {
        let path = dir.path().join(format!("w-{i:08}.xqc"));
        write_chunk_atomic(&path, &common::random_chunk(50 + i, 1, 20)).unwrap();
        set_mtime(&path, i * 10);
    }
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(30));
    let (window, _) = loader.refresh().unwrap();
    let manifest = window.manifest();
    let json = serde_json::to_string(&manifest).unwrap();
    // New data arrives; a fresh loader (a restarted trainer) still rebuilds the old window.
    let path = dir.path().join("w-00000003.xqc");
    write_chunk_atomic(&path, &common::random_chunk(60, 1, 20)).unwrap();
    set_mtime(&path, 100);
    let mut fresh = WindowLoader::new(dir.path(), WindowSize::Fixed(30));
    let rebuilt = fresh
        .load_manifest(&serde_json::from_str(&json).unwrap())
        .unwrap();
    assert_eq!(rebuilt.fingerprint(), window.fingerprint());
    assert_eq!(rebuilt.len(), window.len());
    assert_ne!(
        fresh.refresh().unwrap().0.fingerprint(),
        window.fingerprint()
    );
    // A chunk named in the manifest that is gone is an error naming it.
    fs::remove_file(dir.path().join(&manifest.chunks[0].name)).unwrap();
    let err = WindowLoader::new(dir.path(), WindowSize::Fixed(30))
        .load_manifest(&manifest)
        .unwrap_err();
    assert!(err.to_string().contains(&manifest.chunks[0].name), "{err}");
}

#[test]
fn chunks_that_leave_the_window_are_released_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let first = common::random_chunk(70, 1, 20);
    let p0 = dir.path().join("w-00000000.xqc");
    write_chunk_atomic(&p0, &first).unwrap();
    set_mtime(&p0, 0);
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(first.records.len() as u64));
    let (window, _) = loader.refresh().unwrap();
    let old = Arc::clone(&window.chunks()[0].chunk);
    drop(window);
    let p1 = dir.path().join("w-00000001.xqc");
    write_chunk_atomic(&p1, &common::random_chunk(71, 1, 40)).unwrap();
    set_mtime(&p1, 10);
    let (window, report) = loader.refresh().unwrap();
    assert_eq!(window.chunks().len(), 1);
    assert_eq!(window.chunks()[0].name, "w-00000001.xqc");
    // Only this test still holds the old chunk; the loader let go of it ...
    assert_eq!(Arc::strong_count(&old), 1);
    // ... but still counts its records towards N.
    assert_eq!(
        report.total_records as usize,
        first.records.len() + window.chunks()[0].chunk.records.len()
    );
}

/// A trainer stores the fingerprint with its data cursor: pinned.
#[test]
fn fingerprints_are_pinned() {
    let w = Window::from_chunk("w-00000000.xqc", common::random_chunk(10, 1, 8));
    assert_eq!(w.fingerprint(), 0x6bfb_d817_523f_abd2);
}

/// Writes `n` chunks `w-00000000.xqc`.. with increasing times; returns the total records.
fn write_aged_chunks(dir: &Path, n: usize) -> u64 {
    let mut total = 0;
    for i in 0..n {
        let c = common::random_chunk(100 + i as u64, 1, 12);
        total += c.records.len() as u64;
        let path = dir.join(format!("w-{i:08}.xqc"));
        write_chunk_atomic(&path, &c).unwrap();
        set_mtime(&path, i as u64 * 10);
    }
    total
}

/// The names in `dir`, but the compaction lock file.
fn chunk_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != xq_data::layout::COMPACT_LOCK_FILE)
        .collect();
    v.sort();
    v
}

#[test]
fn compaction_merges_old_chunks_keeps_the_window_the_total_and_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let total = write_aged_chunks(dir.path(), 30);
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(15));
    let (before, report) = loader.refresh().unwrap();
    assert_eq!(report.total_records, total);

    let compacted = loader.compact(40, 4, &HashSet::new()).unwrap();
    assert!(compacted.written >= 1, "{compacted:?}");
    assert_eq!(compacted.merged_files, compacted.written * 4);
    let files = chunk_files(dir.path());
    assert_eq!(files.len(), 30 - compacted.merged_files + compacted.written);
    assert!(files.iter().all(|f| f.ends_with(".xqc")), "{files:?}");

    // Same window, same N, from this loader and from a fresh one.
    for mut l in [loader, WindowLoader::new(dir.path(), WindowSize::Fixed(15))] {
        let (after, report) = l.refresh().unwrap();
        assert_eq!(report.total_records, total);
        assert_eq!(after.fingerprint(), before.fingerprint());
    }
    // A merged file sorts behind every chunk it was not made of: a window over
    // everything ends with the newest chunk and starts with the oldest merged one.
    let (all, _) = WindowLoader::new(dir.path(), WindowSize::Fixed(total))
        .refresh()
        .unwrap();
    assert_eq!(all.len(), total);
    assert!(all.chunks()[0].name.starts_with("compact-"));
    assert_eq!(all.chunks().last().unwrap().name, "w-00000029.xqc");
    let merged = &all.chunks()[0].chunk;
    merged.validate().unwrap();
    assert_eq!(merged.games.len(), 4);
}

#[test]
fn the_held_out_directory_inside_data_is_neither_windowed_nor_compacted() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join(xq_data::layout::DATA_DIR);
    let held_out = root.path().join(xq_data::layout::HELD_OUT_DIR);
    fs::create_dir_all(&held_out).unwrap();
    let total = write_aged_chunks(&data, 12);
    write_aged_chunks(&held_out, 12);
    let held_out_files = chunk_files(&held_out);
    let mut loader = WindowLoader::new(&data, WindowSize::Fixed(1));
    let (_, report) = loader.refresh().unwrap();
    assert_eq!(report.total_records, total);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    // Everything but the newest file is old: 11 files, two whole groups of 4.
    let compacted = loader.compact(1, 4, &HashSet::new()).unwrap();
    assert_eq!(compacted.merged_files, 8, "{compacted:?}");
    assert_eq!(chunk_files(&held_out), held_out_files);
}

#[test]
fn compaction_merges_whole_groups_only_and_never_remerges() {
    let dir = tempfile::tempdir().unwrap();
    write_aged_chunks(dir.path(), 10);
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(1));
    loader.refresh().unwrap();
    // Keep nothing beyond the newest file's records: 9 old files, groups of 4.
    let first = loader.compact(1, 4, &HashSet::new()).unwrap();
    assert_eq!((first.merged_files, first.written), (8, 2));
    loader.refresh().unwrap();
    let second = loader.compact(1, 4, &HashSet::new()).unwrap();
    assert_eq!(
        second.merged_files, 0,
        "one old chunk and two merged files: nothing to do"
    );
    assert_eq!(chunk_files(dir.path()).len(), 4);
}

#[test]
fn a_merge_killed_after_writing_is_finished_and_one_killed_before_is_undone() {
    // By a loader's rescan, and by a run that starts with nothing left to train.
    for (merged_written, by_loader) in [(true, true), (false, true), (true, false), (false, false)]
    {
        let dir = tempfile::tempdir().unwrap();
        let total = write_aged_chunks(dir.path(), 6);
        // The state a kill leaves: the journal, maybe the merged file, all sources.
        let sources: Vec<String> = (0..3).map(|i| format!("w-{i:08}.xqc")).collect();
        let mut journal = "target compact-w-00000002.xqc\n".to_owned();
        for s in &sources {
            journal += &format!("source {s}\n");
        }
        fs::write(dir.path().join("compact-w-00000002.journal"), journal).unwrap();
        if merged_written {
            let mut merged = xq_data::read_chunk(&dir.path().join(&sources[0])).unwrap();
            for s in &sources[1..] {
                merged
                    .append(&xq_data::read_chunk(&dir.path().join(s)).unwrap())
                    .unwrap();
            }
            let path = dir.path().join("compact-w-00000002.xqc");
            write_chunk_atomic(&path, &merged).unwrap();
            set_mtime(&path, 20);
        }
        if !by_loader {
            assert_eq!(xq_data::compact::finish_interrupted(dir.path()).unwrap(), 1);
            assert_eq!(xq_data::compact::finish_interrupted(dir.path()).unwrap(), 0);
            let absent = dir.path().join("absent");
            assert_eq!(xq_data::compact::finish_interrupted(&absent).unwrap(), 0);
        }
        let files = chunk_files(dir.path());
        let journals = files.iter().any(|f| f.ends_with(".journal"));
        assert_eq!(journals, by_loader, "{files:?}");
        let (_, report) = WindowLoader::new(dir.path(), WindowSize::Fixed(1))
            .refresh()
            .unwrap();
        assert_eq!(
            report.total_records, total,
            "merged written: {merged_written}"
        );
        let files = chunk_files(dir.path());
        assert!(!files.iter().any(|f| f.ends_with(".journal")), "{files:?}");
        assert_eq!(files.len(), if merged_written { 4 } else { 6 }, "{files:?}");
    }
}

#[test]
fn a_killed_writers_old_temporary_is_removed_and_reported_a_fresh_one_is_left() {
    let dir = tempfile::tempdir().unwrap();
    write_aged_chunks(dir.path(), 2);
    let old = tmp_path(&dir.path().join("w-00000009.xqc"));
    let fresh = tmp_path(&dir.path().join("w-00000010.xqc"));
    fs::write(&old, b"half a chunk").unwrap();
    // Age is the inode's change time, which no test can set back: wait instead.
    std::thread::sleep(Duration::from_millis(1200));
    fs::write(&fresh, b"being written").unwrap();
    let (_, report) = WindowLoader::new(dir.path(), WindowSize::Fixed(10))
        .stale_temporaries_after(Duration::from_secs(1))
        .refresh()
        .unwrap();
    assert_eq!(report.removed, std::slice::from_ref(&old));
    assert!(!old.exists());
    assert!(fresh.exists());
    assert!(report.skipped.is_empty());
}

#[test]
fn compaction_stays_behind_protected_chunks() {
    let dir = tempfile::tempdir().unwrap();
    write_aged_chunks(dir.path(), 10);
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(1));
    loader.refresh().unwrap();
    // The window in use still reads w-00000004: only the four older ones may merge.
    let protect: HashSet<String> = ["w-00000004.xqc".to_owned()].into();
    let c = loader.compact(1, 2, &protect).unwrap();
    assert_eq!((c.merged_files, c.written), (4, 2), "{c:?}");
    let files = chunk_files(dir.path());
    for i in 4..10 {
        assert!(files.contains(&format!("w-{i:08}.xqc")), "{files:?}");
    }
}

#[test]
fn an_unreadable_old_chunk_is_skipped_once_and_the_others_merge() {
    let dir = tempfile::tempdir().unwrap();
    write_aged_chunks(dir.path(), 6);
    // A good header over a damaged payload: only a full read finds it.
    let bad = dir.path().join("w-00000001.xqc");
    let mut bytes = fs::read(&bad).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&bad, &bytes).unwrap();
    set_mtime(&bad, 10);
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(1));
    loader.refresh().unwrap();
    let c = loader.compact(1, 2, &HashSet::new()).unwrap();
    assert_eq!(c.skipped.len(), 1, "{c:?}");
    assert_eq!(c.skipped[0].path, bad);
    assert_eq!((c.merged_files, c.written), (4, 2), "{c:?}");
    assert!(bad.exists());
    loader.refresh().unwrap();
    let again = loader.compact(1, 2, &HashSet::new()).unwrap();
    assert!(again.skipped.is_empty(), "reported once: {again:?}");
}

#[test]
fn a_second_compactor_stays_out_while_the_lock_is_held() {
    let dir = tempfile::tempdir().unwrap();
    write_aged_chunks(dir.path(), 6);
    let held = fs::File::create(dir.path().join(xq_data::layout::COMPACT_LOCK_FILE)).unwrap();
    held.lock().unwrap();
    let mut loader = WindowLoader::new(dir.path(), WindowSize::Fixed(1));
    loader.refresh().unwrap();
    let c = loader.compact(1, 2, &HashSet::new()).unwrap();
    assert!(c.locked_out && c.written == 0, "{c:?}");
    drop(held);
    let c = loader.compact(1, 2, &HashSet::new()).unwrap();
    assert!(!c.locked_out && c.written == 2, "{c:?}");
}
