// A counter and a like button for Flutter, in Dart: the same rules as the web client
// (client/src/coverage.ts for increments, client/src/member-coverage.ts for likes), explained in
// docs/native.md.
//
// NOT COMPILED OR TESTED HERE: this repository has no Flutter or Dart toolchain. Every API below was read
// in the plugins' source instead (list at the end of this header), on the flutterfire main branch in
// November 2026; no cloud_functions or cloud_firestore version was pinned, built or run. It needs Dart 3
// (records, record typedefs, patterns) and the packages cloud_functions, cloud_firestore and flutter.
//
// What each model does, as the web client does: nothing before the first snapshot, nothing for a counter
// that does not exist, one key per tap retried on everything but a refusal (8 attempts, backoff 250 ms
// doubling to 8 s, equal jitter), every tap settled (its writeTime, or taken back, also on dispose()),
// listeners cancelled by dispose(). The retry table of docs/native.md ("What a lost connection looks like")
// says why 'unknown', 'unavailable' and errors that are not FirebaseFunctionsException are retried.
//
// Sources (github.com/firebase/flutterfire):
// - packages/cloud_functions/cloud_functions/lib/src/firebase_functions.dart:
//   FirebaseFunctions.instanceFor({app, region}), httpsCallable(String name); lib/src/https_callable.dart:
//   Future<HttpsCallableResult<T>> call<T>([dynamic parameters]); lib/src/https_callable_result.dart:
//   T get data.
// - packages/cloud_functions/cloud_functions_platform_interface/lib/src/firebase_functions_exception.dart:
//   FirebaseFunctionsException with a String code; lib/src/method_channel/utils/exception.dart: a
//   PlatformException becomes one with code details['code'], default 'unknown', and any other error is
//   rethrown as it is.
// - packages/cloud_functions/cloud_functions/ios/cloud_functions/Sources/cloud_functions/FirebaseFunctionsPlugin.swift:
//   createFlutterError(from:) gives every error outside com.firebase.functions the code 'unknown';
//   packages/cloud_functions/cloud_functions/android/src/main/kotlin/io/flutter/plugins/firebase/functions/FlutterFirebaseFunctionsPlugin.kt:
//   getExceptionDetails reports an IOException cause as 'unavailable' and any exception that is not a
//   FirebaseFunctionsException (a failed token fetch) as 'unknown'.
// - packages/cloud_firestore/cloud_firestore/lib/src/document_reference.dart: Stream<DocumentSnapshot<T>>
//   snapshots({bool includeMetadataChanges = false, ...}); lib/src/document_snapshot.dart: T? data() (null
//   when the document does not exist), bool get exists, SnapshotMetadata get metadata;
//   lib/src/snapshot_metadata.dart: bool get isFromCache; lib/src/firestore.dart: Stream<void>
//   snapshotsInSync(), "called each time all of the active listeners have been synchronised";
//   packages/cloud_firestore/cloud_firestore_platform_interface/lib/src/timestamp.dart:
//   Timestamp(int seconds, int nanoseconds), compareTo.
// - dart:async: unawaited.

import 'dart:async';
import 'dart:math';
import 'package:cloud_firestore/cloud_firestore.dart';
import 'package:cloud_functions/cloud_functions.dart';
import 'package:flutter/foundation.dart';

/// The codes that refuse a call: the tap is taken back. Every other failure is retried.
const _refusals = {'invalid-argument', 'not-found', 'permission-denied', 'unauthenticated',
  'failed-precondition', 'already-exists', 'out-of-range', 'unimplemented', 'cancelled', 'data-loss'};

/// One counter on screen. [shown] is null before the first snapshot and while the counter does not exist.
class CounterModel extends ChangeNotifier {
  CounterModel(this.counterId) {
    _sub = FirebaseFirestore.instance.collection('counters').doc(counterId).snapshots().listen((snap) {
      final data = snap.data(); // null: deleted, or not created yet
      if (data == null) {
        _latest = (exists: false, total: 0, coveredUntil: null);
      } else {
        final times = [(data['rollup'] as Map?)?['readTime'], data['createdAt']].whereType<Timestamp>();
        final c = times.isEmpty ? null : times.reduce((a, b) => a.compareTo(b) >= 0 ? a : b);
        // Older than one already seen (a cache): skip it, so that taps already dropped as covered are
        // never needed again.
        if (_seenUntil != null && (c == null || c.compareTo(_seenUntil!) < 0)) return;
        _seenUntil = c;
        // num: on the web (Wasm) integers arrive as double.
        _latest = (exists: true, total: (data['total'] as num? ?? 0).toInt(), coveredUntil: c);
      }
      _render();
    }, onError: (Object _) {}); // a listen error: keep showing the last value
  }

  final String counterId;
  int? shown;
  ({bool exists, int total, Timestamp? coveredUntil})? _latest; // null until the first snapshot
  Timestamp? _seenUntil; // the newest coveredUntil of any snapshot received
  final _own = <String, ({int delta, Timestamp? writeTime, Timestamp? sentAfter})>{};
  final _increment = FirebaseFunctions.instanceFor(region: 'us-central1').httpsCallable('incrementCounter');
  final _random = Random.secure();
  late final StreamSubscription<DocumentSnapshot<Map<String, dynamic>>> _sub;
  var _disposed = false;
  static const _chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

  Future<void> tap([int delta = 1]) async {
    // One key per user action, the same on every retry.
    final requestId = List.generate(22, (_) => _chars[_random.nextInt(64)]).join();
    _own[requestId] = (delta: delta, writeTime: null, sentAfter: _seenUntil);
    _render();
    try {
      for (var attempt = 0; attempt < 8 && !_disposed; attempt++) {
        try {
          final result = await _increment.call<Object?>({'counterId': counterId, 'delta': delta, 'requestId': requestId});
          final w = (result.data as Map?)?['writeTime'] as Map?;
          final seconds = w?['seconds'] as num?, nanos = w?['nanoseconds'] as num?;
          if (seconds != null && nanos != null) {
            _own[requestId] = (delta: delta, writeTime: Timestamp(seconds.toInt(), nanos.toInt()), sentAfter: null);
            return;
          } // an answer without a writeTime: retry
        } on FirebaseFunctionsException catch (e) {
          // 'unknown' is retried: Flutter on iOS reports being offline so, on Android a failed token fetch.
          if (_refusals.contains(e.code)) return;
        } catch (_) {
          // Not a callable error (a PlatformException, a bad cast, …): retry.
        }
        final capMs = min(8000, 250 << attempt);
        await Future<void>.delayed(Duration(milliseconds: capMs ~/ 2 + _random.nextInt(capMs ~/ 2 + 1)));
      }
    } finally {
      // Refused, out of attempts, or disposed: take the tap back.
      if (_own[requestId]?.writeTime == null) _own.remove(requestId);
      _render();
    }
  }

  void _render() {
    final latest = _latest;
    if (_disposed || latest == null) return; // nothing before the first snapshot, nothing after dispose()
    var mine = 0;
    final c = latest.coveredUntil;
    for (final MapEntry(:key, :value) in _own.entries.toList()) {
      final w = value.writeTime, sent = value.sentAfter;
      if (w != null && c != null && w.compareTo(c) <= 0) {
        _own.remove(key); // in total now
      } else if (w != null || c == null || (sent != null && c.compareTo(sent) <= 0)) {
        mine += value.delta;
      } else {
        return; // this snapshot may already hold the in-flight tap: wait for its answer
      }
    }
    shown = latest.exists ? latest.total + mine : null;
    notifyListeners();
  }

  @override
  void dispose() {
    _disposed = true;
    _sub.cancel();
    super.dispose();
  }
}

typedef _Record = ({bool member, Timestamp? changedAt, Timestamp? previousChangedAt});

/// A like button on a unique counter. [count] is null while the counter does not exist; [ready] is false
/// before a snapshot that tells the count.
class LikeModel extends ChangeNotifier {
  LikeModel(this.counterId, String uid) {
    final db = FirebaseFirestore.instance;
    final ref = db.collection('counters').doc(counterId);
    _subs = [
      ref.snapshots(includeMetadataChanges: true).listen(_counterChanged, onError: (Object _) {}), // keep the last value
      ref.collection('memberships').doc(uid).snapshots(includeMetadataChanges: true).listen((s) {
        final d = s.data();
        final _Record? r = d?['member'] is bool
            ? (member: d!['member'] as bool, changedAt: d['changedAt'] as Timestamp?, previousChangedAt: d['previousChangedAt'] as Timestamp?)
            : null;
        _record = (value: r, fromCache: s.metadata.isFromCache);
      }, onError: (Object _) {}),
      ref.collection('members').doc(uid).snapshots(includeMetadataChanges: true).listen(
          (s) => _memberDoc = (exists: s.exists, fromCache: s.metadata.isFromCache), onError: (Object _) {}),
      // Every listener has fired for a change: the three documents are one snapshot.
      db.snapshotsInSync().listen((_) => _inSync()),
    ];
  }

  final String counterId;
  bool ready = false;
  int? count;
  ({bool exists, int total, Timestamp? coveredUntil, bool fromCache})? _counter;
  ({_Record? value, bool fromCache})? _record;
  ({bool exists, bool fromCache})? _memberDoc;
  Timestamp? _seenUntil;
  ({bool exists, _Record? record, bool server})? _synced; // the last consistent snapshot
  ({int total, int others})? _basis; // the last snapshot that told M(R)
  ({bool member, Timestamp writeTime})? _last; // the last changed answer, until the record has it
  final _calls = <bool>[]; // taps not answered yet; _calls.first is in flight
  final _setMember = FirebaseFunctions.instanceFor(region: 'us-central1').httpsCallable('setMember');
  final _random = Random.secure();
  late final List<StreamSubscription<dynamic>> _subs;
  var _disposed = false;

  /// The like to show: the last tap while calls are pending, the last answer until the record has it,
  /// else the server's.
  bool get liked => _calls.isNotEmpty ? _calls.last : (_last?.member ?? _synced?.server ?? false);

  void tap() {
    _calls.add(!liked);
    _render();
    if (_calls.length == 1) unawaited(_sendAll()); // else the running _sendAll() sends it next
  }

  void _counterChanged(DocumentSnapshot<Map<String, dynamic>> snap) {
    final data = snap.data();
    if (data == null) {
      _counter = (exists: false, total: 0, coveredUntil: null, fromCache: snap.metadata.isFromCache);
      return;
    }
    final times = [(data['rollup'] as Map?)?['readTime'], data['createdAt']].whereType<Timestamp>();
    final c = times.isEmpty ? null : times.reduce((a, b) => a.compareTo(b) >= 0 ? a : b);
    if (_seenUntil != null && (c == null || c.compareTo(_seenUntil!) < 0)) return; // an older snapshot
    _seenUntil = c;
    _counter = (exists: true, total: (data['total'] as num? ?? 0).toInt(), coveredUntil: c, fromCache: snap.metadata.isFromCache);
  }

  /// M(R): the membership at the total's coverage time, or null when this snapshot cannot tell.
  static bool? _membershipAt(Timestamp? r, _Record? record, bool memberDoc) {
    if (r == null) return false; // the total holds no change
    if (record == null) return memberDoc; // never changed since records exist
    final c1 = record.changedAt, c0 = record.previousChangedAt;
    if (record.member != memberDoc || c1 == null) return null; // not one state, or no time yet
    if (r.compareTo(c1) >= 0) return record.member;
    if (c0 != null && r.compareTo(c0) < 0) return null; // two changes the total does not hold
    return !record.member;
  }

  /// Whether the record holds the change at [w] or a later one (without its time: if the one before is).
  static bool _holds(_Record? record, Timestamp w) {
    if (record == null) return false;
    final c1 = record.changedAt, c0 = record.previousChangedAt;
    if (c1 != null) return c1.compareTo(w) >= 0;
    return c0 != null && c0.compareTo(w) >= 0;
  }

  void _inSync() {
    final counter = _counter, record = _record, memberDoc = _memberDoc;
    if (counter == null || record == null || memberDoc == null) return; // nothing before all three arrived
    if (counter.fromCache || record.fromCache || memberDoc.fromCache) return; // from the server only
    _synced = (exists: counter.exists, record: record.value, server: record.value?.member ?? memberDoc.exists);
    if (!counter.exists) {
      _basis = null;
    } else {
      final m = _membershipAt(counter.coveredUntil, record.value, memberDoc.exists);
      if (m != null) _basis = (total: counter.total, others: counter.total - (m ? 1 : 0));
    }
    if (_last != null && _holds(record.value, _last!.writeTime)) _last = null;
    _render();
  }

  Future<void> _sendAll() async {
    while (_calls.isNotEmpty && !_disposed) {
      final member = _calls.first;
      Object? answer;
      Timestamp? writeTime;
      try {
        for (var attempt = 0; attempt < 8 && !_disposed; attempt++) {
          try {
            final data = (await _setMember.call<Object?>({'counterId': counterId, 'member': member})).data as Map?;
            final w = data?['writeTime'] as Map?;
            final seconds = w?['seconds'] as num?, nanos = w?['nanoseconds'] as num?;
            if (data?['changed'] == true && seconds != null && nanos != null) writeTime = Timestamp(seconds.toInt(), nanos.toInt());
            if (data?['changed'] == false || writeTime != null) { answer = data; break; }
          } on FirebaseFunctionsException catch (e) {
            if (_refusals.contains(e.code)) break; // 'unknown' (offline on iOS, a token fetch on Android): retry
          } catch (_) {
            // Not a callable error (a PlatformException, a bad cast, …): retry.
          }
          final capMs = min(8000, 250 << attempt);
          await Future<void>.delayed(Duration(milliseconds: capMs ~/ 2 + _random.nextInt(capMs ~/ 2 + 1)));
        }
      } finally {
        _calls.removeAt(0);
        if (writeTime != null) {
          _last = _holds(_synced?.record, writeTime) ? null : (member: member, writeTime: writeTime);
        } else if (answer != null && _last?.member != member) {
          _last = null; // unchanged, and the server says otherwise: the record tells
        }
        _render();
      }
    }
    if (_disposed) _calls.clear();
  }

  void _render() {
    final synced = _synced, basis = _basis;
    if (_disposed || synced == null) return; // nothing before the first consistent snapshot, nothing after dispose()
    if (synced.exists && basis == null) return; // no snapshot has told M(R) yet
    ready = true;
    count = synced.exists ? basis!.others + (liked ? 1 : 0) : null;
    notifyListeners();
  }

  @override
  void dispose() {
    _disposed = true;
    for (final sub in _subs) {
      sub.cancel();
    }
    super.dispose();
  }
}
