// A counter and a like button for iOS, in Swift: the same rules as the web client
// (client/src/coverage.ts for increments, client/src/member-coverage.ts for likes), explained in
// docs/native.md.
//
// NOT COMPILED OR TESTED HERE: this repository has no Xcode or iOS toolchain. Every API below was read in
// the SDK's source instead (list at the end of this header), on the firebase-ios-sdk main branch in
// November 2026; no SDK version was pinned, built or run. Language: Swift 6 language mode (the models are
// @MainActor; the calls run in nonisolated functions that take and return only Sendable values);
// MainActor.assumeIsolated needs Swift 5.9 (back-deployed). Packages: FirebaseFirestore and
// FirebaseFunctions from https://github.com/firebase/firebase-ios-sdk.
//
// What each model does, as the web client does: nothing before the first snapshot, nothing for a counter
// that does not exist, one key per tap retried on everything but a refusal (8 attempts, backoff 250 ms
// doubling to 8 s, equal jitter), every tap settled (its writeTime, or taken back), listeners removed by
// stop(). The retry table of docs/native.md ("What a lost connection looks like") says why any error outside
// FunctionsErrorDomain is retried.
//
// Sources (github.com/firebase/firebase-ios-sdk):
// - FirebaseFunctions/Sources/Functions.swift: Functions.functions(region:), httpsCallable(_:) ->
//   HTTPSCallable; processedError(fromResponseError:) maps only kGTMSessionFetcherStatusDomain errors
//   (HTTP statuses) and NSURLErrorTimedOut into FunctionsErrorDomain and returns every other error as it
//   is; contextProvider.context(options:) throws the token fetch's own error.
// - FirebaseFunctions/Sources/HTTPSCallable.swift: call(_ data: Any? = nil) async throws ->
//   HTTPSCallableResult, HTTPSCallableResult.data: Any.
// - FirebaseFunctions/Sources/FunctionsError.swift: FunctionsErrorDomain, enum FunctionsErrorCode: Int
//   (.invalidArgument, .notFound, ... .dataLoss).
// - Firestore/Source/Public/FirebaseFirestore/FIRDocumentReference.h: addSnapshotListener(_:),
//   addSnapshotListener(includeMetadataChanges:listener:), collection(_:); FIRListenerRegistration.h:
//   remove(); FIRDocumentSnapshot.h: exists, get(_:); FIRSnapshotMetadata.h: isFromCache;
//   FIRTimestamp.h: seconds: Int64, nanoseconds: Int32; FIRFirestoreSettings.h: dispatchQueue, "By
//   default, the main queue is used".
// - Firestore/Source/Public/FirebaseFirestore/FIRFirestore.h: addSnapshotsInSyncListener(_ listener:
//   @escaping () -> Void) -> ListenerRegistration; Firestore/core/src/api/firestore.cc:
//   AddSnapshotsInSyncListener runs it on the settings' dispatchQueue (main by default), like the
//   snapshot listeners.
// - Swift standard library: MainActor.assumeIsolated(_:).

import FirebaseFirestore
import FirebaseFunctions

/// A Firestore commit or read time, compared exactly.
struct Time: Comparable, Sendable {
  let seconds: Int64
  let nanos: Int32
  init(_ t: Timestamp) {
    seconds = t.seconds
    nanos = t.nanoseconds
  }
  /// `writeTime` of an incrementCounter answer; nil if it is missing or malformed.
  init?(answer: Any?) {
    guard let w = answer as? [String: Any], let s = w["seconds"] as? NSNumber,
          let n = w["nanoseconds"] as? NSNumber else { return nil }
    seconds = s.int64Value
    nanos = n.int32Value
  }
  static func < (a: Time, b: Time) -> Bool { (a.seconds, a.nanos) < (b.seconds, b.nanos) }
}

/// Whether a callable's error is a refusal (the tap is taken back). Anything else is retried, including
/// errors outside FunctionsErrorDomain (offline, connection lost, a token fetch: raw NSURLErrorDomain errors).
func isRefusal(_ error: Error) -> Bool {
  let refusals: Set<FunctionsErrorCode> = [.invalidArgument, .notFound, .permissionDenied, .unauthenticated,
    .failedPrecondition, .alreadyExists, .outOfRange, .unimplemented, .cancelled, .dataLoss]
  let error = error as NSError
  return error.domain == FunctionsErrorDomain && FunctionsErrorCode(rawValue: error.code).map { refusals.contains($0) } == true
}

/// One counter on screen: `onChange(nil)` while it does not exist, nothing before the first snapshot.
/// Call `stop()` when the screen goes away.
@MainActor final class CounterModel {
  var onChange: (Int?) -> Void = { _ in }
  private let counterId: String
  private var latest: (exists: Bool, total: Int, coveredUntil: Time?)?  // nil until the first snapshot
  private var seenUntil: Time?  // the newest coveredUntil of any snapshot received
  private var own: [String: (delta: Int, writeTime: Time?, sentAfter: Time?)] = [:]
  private var listener: ListenerRegistration?
  private enum Outcome: Sendable { case applied(Time), refused, retry }

  init(counterId: String) {
    self.counterId = counterId
    // Firestore calls listeners on the main queue (the default of FirestoreSettings.dispatchQueue).
    listener = Firestore.firestore().collection("counters").document(counterId)
      .addSnapshotListener { [weak self] snap, _ in
        guard let snap else { return }  // a listen error: keep showing the last value
        MainActor.assumeIsolated { self?.apply(snap) }
      }
  }

  func stop() {
    listener?.remove()
    listener = nil
  }

  func tap(delta: Int = 1) {
    let requestId = UUID().uuidString  // one key per user action, the same on every retry
    own[requestId] = (delta, nil, seenUntil)
    render()
    Task { await send(requestId, delta) }
  }

  private func apply(_ snap: DocumentSnapshot) {
    if snap.exists {
      let coveredUntil = [snap.get("rollup.readTime"), snap.get("createdAt")].compactMap { $0 as? Timestamp }.map { Time($0) }.max()
      // Older than one already seen (a cache): skip it, so that taps already dropped as covered are
      // never needed again.
      if let seen = seenUntil, coveredUntil.map({ $0 < seen }) ?? true { return }
      seenUntil = coveredUntil
      latest = (exists: true, total: snap.get("total") as? Int ?? 0, coveredUntil: coveredUntil)
    } else {
      latest = (exists: false, total: 0, coveredUntil: nil)  // deleted, or not created yet
    }
    render()
  }

  private func send(_ requestId: String, _ delta: Int) async {
    attempts: for attempt in 0..<8 {
      switch await Self.call(counterId, delta, requestId) {
      case .applied(let writeTime):
        own[requestId]?.writeTime = writeTime
        return render()
      case .refused:
        break attempts
      case .retry:
        let capMs = UInt64(min(8_000, 250 << attempt))
        try? await Task.sleep(nanoseconds: (capMs / 2 + UInt64.random(in: 0...capMs / 2)) * 1_000_000)
      }
    }
    own[requestId] = nil  // refused, or out of attempts: take the tap back
    render()
  }

  /// One incrementCounter call. Only a refusal is final (isRefusal); anything else is retried.
  nonisolated private static func call(_ counterId: String, _ delta: Int, _ requestId: String) async -> Outcome {
    do {
      let result = try await Functions.functions(region: "us-central1").httpsCallable("incrementCounter")
        .call(["counterId": counterId, "delta": delta, "requestId": requestId])
      guard let writeTime = Time(answer: (result.data as? [String: Any])?["writeTime"]) else { return .retry }
      return .applied(writeTime)
    } catch {
      return isRefusal(error) ? .refused : .retry
    }
  }

  private func render() {
    guard let latest else { return }  // nothing before the first snapshot
    guard latest.exists else { return onChange(nil) }
    var mine = 0
    for (id, inc) in own {
      if let w = inc.writeTime {
        if let c = latest.coveredUntil, w <= c { own[id] = nil } else { mine += inc.delta }
      } else if let c = latest.coveredUntil, !(inc.sentAfter.map({ c <= $0 }) ?? false) {
        return  // this snapshot may already hold the in-flight tap: wait for its answer
      } else {
        mine += inc.delta
      }
    }
    onChange(latest.total + mine)
  }
}

/// A like button on a unique counter. `onChange(count, liked)`: count nil while the counter does not
/// exist; nothing before a snapshot that tells the count. Call `stop()` when the screen goes away.
@MainActor final class LikeModel {
  var onChange: (Int?, Bool) -> Void = { _, _ in }
  private struct Record { let member: Bool, changedAt: Time?, previousChangedAt: Time? }
  private let counterId: String
  private var counter: (exists: Bool, total: Int, coveredUntil: Time?, fromCache: Bool)?
  private var record: (value: Record?, fromCache: Bool)?
  private var memberDoc: (exists: Bool, fromCache: Bool)?
  private var seenUntil: Time?
  private var synced: (exists: Bool, record: Record?, server: Bool)?  // the last consistent snapshot
  private var basis: (total: Int, others: Int)?  // the last snapshot that told M(R)
  private var last: (member: Bool, writeTime: Time)?  // the last changed answer, until the record has it
  private var calls: [Bool] = []  // taps not answered yet; calls[0] is in flight
  private var listeners: [ListenerRegistration] = []
  private enum Outcome: Sendable { case changed(Time), unchanged, refused, retry }

  init(counterId: String, uid: String) {
    self.counterId = counterId
    let db = Firestore.firestore()
    let ref = db.collection("counters").document(counterId)
    listeners = [
      ref.addSnapshotListener(includeMetadataChanges: true) { [weak self] snap, _ in
        guard let snap else { return }  // a listen error: keep showing the last value
        MainActor.assumeIsolated { self?.counterChanged(snap) }
      },
      ref.collection("memberships").document(uid).addSnapshotListener(includeMetadataChanges: true) { [weak self] snap, _ in
        guard let snap else { return }
        let record = snap.exists ? (snap.get("member") as? Bool).map {
          Record(member: $0, changedAt: (snap.get("changedAt") as? Timestamp).map { Time($0) },
                 previousChangedAt: (snap.get("previousChangedAt") as? Timestamp).map { Time($0) })
        } : nil
        MainActor.assumeIsolated { self?.record = (record, snap.metadata.isFromCache) }
      },
      ref.collection("members").document(uid).addSnapshotListener(includeMetadataChanges: true) { [weak self] snap, _ in
        guard let snap else { return }
        MainActor.assumeIsolated { self?.memberDoc = (snap.exists, snap.metadata.isFromCache) }
      },
      // Every listener has fired for a change: the three documents are one snapshot.
      db.addSnapshotsInSyncListener { [weak self] in
        MainActor.assumeIsolated { self?.inSync() }
      },
    ]
  }

  func stop() {
    listeners.forEach { $0.remove() }
    listeners = []
  }

  /// The like to show: the last tap while calls are pending, the last answer until the record has it,
  /// else the server's.
  var liked: Bool { calls.last ?? last?.member ?? synced?.server ?? false }

  func tap() {
    calls.append(!liked)
    render()
    if calls.count == 1 { Task { await sendAll() } }  // else the running sendAll() sends it next
  }

  private func counterChanged(_ snap: DocumentSnapshot) {
    guard snap.exists else { return counter = (false, 0, nil, snap.metadata.isFromCache) }
    let coveredUntil = [snap.get("rollup.readTime"), snap.get("createdAt")].compactMap { $0 as? Timestamp }.map { Time($0) }.max()
    if let seen = seenUntil, coveredUntil.map({ $0 < seen }) ?? true { return }  // an older snapshot
    seenUntil = coveredUntil
    counter = (true, snap.get("total") as? Int ?? 0, coveredUntil, snap.metadata.isFromCache)
  }

  /// M(R): the membership at the total's coverage time, or nil when this snapshot cannot tell.
  private func membership(at r: Time?, _ record: Record?, memberDoc: Bool) -> Bool? {
    guard let r else { return false }  // the total holds no change
    guard let record else { return memberDoc }  // never changed since records exist
    guard record.member == memberDoc, let c1 = record.changedAt else { return nil }  // not one state, or no time yet
    if r >= c1 { return record.member }
    if let c0 = record.previousChangedAt, r < c0 { return nil }  // two changes the total does not hold
    return !record.member
  }

  /// Whether the record holds the change at `w` or a later one (without its time: if the one before is).
  private func holds(_ record: Record?, _ w: Time) -> Bool {
    guard let record else { return false }
    if let c1 = record.changedAt { return c1 >= w }
    return record.previousChangedAt.map { $0 >= w } ?? false
  }

  private func inSync() {
    guard let counter, let record, let memberDoc,
          !counter.fromCache, !record.fromCache, !memberDoc.fromCache else { return }  // from the server only
    synced = (counter.exists, record.value, record.value?.member ?? memberDoc.exists)
    if !counter.exists {
      basis = nil
    } else if let m = membership(at: counter.coveredUntil, record.value, memberDoc: memberDoc.exists) {
      basis = (counter.total, counter.total - (m ? 1 : 0))
    }
    if let w = last?.writeTime, holds(record.value, w) { last = nil }
    render()
  }

  private func sendAll() async {
    while let member = calls.first {
      var outcome = Outcome.retry
      for attempt in 0..<8 {
        outcome = await Self.call(counterId, member)
        guard case .retry = outcome else { break }
        let capMs = UInt64(min(8_000, 250 << attempt))
        try? await Task.sleep(nanoseconds: (capMs / 2 + UInt64.random(in: 0...capMs / 2)) * 1_000_000)
      }
      calls.removeFirst()
      switch outcome {
      case .changed(let w): last = holds(synced?.record ?? nil, w) ? nil : (member, w)
      case .unchanged where last?.member != member: last = nil  // the server says otherwise: the record tells
      default: break  // refused or out of attempts: the record tells
      }
      render()
    }
  }

  /// One setMember call. Only a refusal is final; anything else is retried (see CounterModel).
  nonisolated private static func call(_ counterId: String, _ member: Bool) async -> Outcome {
    do {
      let result = try await Functions.functions(region: "us-central1").httpsCallable("setMember")
        .call(["counterId": counterId, "member": member])
      let data = result.data as? [String: Any]
      switch data?["changed"] as? Bool {
      case false?: return .unchanged
      case true?: return Time(answer: data?["writeTime"]).map { .changed($0) } ?? .retry
      case nil: return .retry
      }
    } catch {
      return isRefusal(error) ? .refused : .retry
    }
  }

  private func render() {
    guard let synced else { return }  // nothing before the first consistent snapshot
    guard synced.exists else { return onChange(nil, liked) }
    guard let basis else { return }  // no snapshot has told M(R) yet
    onChange(basis.others + (liked ? 1 : 0), liked)
  }
}
