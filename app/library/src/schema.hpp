#pragma once
// Private: the library's schema, one SQL script per version. A library at version N is brought
// to the current version by running the scripts N+1 … current in one transaction each; v1 is
// kept as it shipped so that migration from it stays tested (tests/auto/library).
namespace spillway::library::detail {

// 'SPLW': marks the file as a Spillway library (PRAGMA application_id).
inline constexpr int kApplicationId = 0x53504c57;

inline constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE incidents(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK(kind IN ('calls', 'aggregates')),
  source TEXT NOT NULL DEFAULT '',
  t_start INTEGER NOT NULL DEFAULT 0,
  t_end INTEGER NOT NULL DEFAULT 0,
  records INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL);
CREATE TABLE instances(
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  records INTEGER NOT NULL DEFAULT 0,
  t_start INTEGER NOT NULL DEFAULT 0,
  t_end INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(incident_id, idx)) WITHOUT ROWID;
CREATE TABLE strings(
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  idx INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY(incident_id, idx)) WITHOUT ROWID;
CREATE TABLE blocks(
  id INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  seq INTEGER NOT NULL,
  n INTEGER NOT NULL,
  t_min INTEGER NOT NULL,
  t_max INTEGER NOT NULL,
  data BLOB NOT NULL,
  UNIQUE(incident_id, seq));
CREATE TABLE samples(
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  seq INTEGER NOT NULL,
  instance_idx INTEGER NOT NULL,
  t_end INTEGER NOT NULL,
  step INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  slow INTEGER NOT NULL,
  PRIMARY KEY(incident_id, seq)) WITHOUT ROWID;
CREATE TABLE sources(
  hash TEXT PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  path TEXT NOT NULL,
  format TEXT NOT NULL,
  records INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  imported TEXT NOT NULL);
CREATE TABLE annotations(
  id INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  instance TEXT NOT NULL,
  t1 INTEGER NOT NULL,
  t2 INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT '',
  origin TEXT NOT NULL CHECK(origin IN ('simulator', 'operator')));
)sql";

// v2: saved runs (policy snapshot, KPIs, transitions) and the indexes that time-range and
// per-incident lookups need.
inline constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  incident_id INTEGER NOT NULL REFERENCES incidents(id),
  policy_yaml TEXT NOT NULL,
  kpis_json TEXT NOT NULL,
  transitions_json TEXT NOT NULL,
  created TEXT NOT NULL);
CREATE INDEX runs_incident ON runs(incident_id);
CREATE INDEX blocks_time ON blocks(incident_id, t_min);
CREATE INDEX annotations_incident ON annotations(incident_id, instance);
)sql";

// v3: live recordings (docs/library.md, "Live recording"). Their blocks carry their own
// strings (recording_block.hpp) so that retention, which deletes the oldest blocks, leaves
// nothing behind; `recordings` keeps running totals so a commit never counts rows. The two
// time indexes serve retention (oldest start left) and cuts (blocks that reach a range).
inline constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE recordings(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  max_age INTEGER NOT NULL DEFAULT 0,
  max_records INTEGER NOT NULL DEFAULT 0,
  max_bytes INTEGER NOT NULL DEFAULT 0,
  next_seq INTEGER NOT NULL DEFAULT 0,
  calls INTEGER NOT NULL DEFAULT 0,
  samples INTEGER NOT NULL DEFAULT 0,
  blocks INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0,
  t_start INTEGER NOT NULL DEFAULT 0,
  t_end INTEGER NOT NULL DEFAULT 0,
  recorded INTEGER NOT NULL DEFAULT 0,
  dropped INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL);
CREATE TABLE rec_blocks(
  id INTEGER PRIMARY KEY,
  recording_id INTEGER NOT NULL REFERENCES recordings(id),
  seq INTEGER NOT NULL,
  kind INTEGER NOT NULL CHECK(kind IN (0, 1)),
  n INTEGER NOT NULL,
  t_min INTEGER NOT NULL,
  t_max INTEGER NOT NULL,
  data BLOB NOT NULL,
  UNIQUE(recording_id, seq));
CREATE INDEX rec_blocks_start ON rec_blocks(recording_id, t_min);
CREATE INDEX rec_blocks_end ON rec_blocks(recording_id, t_max);
CREATE TABLE rec_annotations(
  id INTEGER PRIMARY KEY,
  recording_id INTEGER NOT NULL REFERENCES recordings(id),
  instance TEXT NOT NULL,
  t1 INTEGER NOT NULL,
  t2 INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT '',
  origin TEXT NOT NULL CHECK(origin IN ('simulator', 'operator')));
CREATE INDEX rec_annotations_time ON rec_annotations(recording_id, t1);
)sql";

// v4: drill runs (docs/drills.md): each run of a runbook with its revision, the Spillway
// version and policy it ran with, its KPIs and verdict — the console plots their trend.
inline constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE drill_runs(
  id INTEGER PRIMARY KEY,
  runbook TEXT NOT NULL,
  revision INTEGER NOT NULL,
  spillway_version TEXT NOT NULL,
  policy_yaml TEXT NOT NULL,
  result_json TEXT NOT NULL,
  passed INTEGER NOT NULL CHECK(passed IN (0, 1)),
  created TEXT NOT NULL);
CREATE INDEX drill_runs_runbook ON drill_runs(runbook, id);
)sql";

// v5: the rows of sweep shards (docs/scale-out.md): the JSON Lines one `sweep --shard I/N`
// wrote, under the sweep's key; a task run again replaces its shard's row, never adds one.
inline constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE sweep_shards(
  sweep TEXT NOT NULL,
  shard INTEGER NOT NULL,
  shards INTEGER NOT NULL,
  data TEXT NOT NULL,
  created TEXT NOT NULL,
  PRIMARY KEY(sweep, shard)) WITHOUT ROWID;
)sql";

inline constexpr const char* kMigrations[] = {nullptr,   kSchemaV1, kSchemaV2,
                                              kSchemaV3, kSchemaV4, kSchemaV5};

}  // namespace spillway::library::detail
