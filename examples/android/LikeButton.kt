// A counter and a like button for Android, in Kotlin: the same rules as the web client
// (client/src/coverage.ts for increments, client/src/member-coverage.ts for likes), explained in
// docs/native.md.
//
// NOT COMPILED OR TESTED HERE: this repository has no Android or Gradle toolchain. Every API below was
// read in the SDK's source instead (list at the end of this header), on the firebase-android-sdk main
// branch in November 2026; no Firebase Android BoM version was pinned, built or run. It uses the Kotlin
// extensions of the main modules (com.google.firebase.Firebase, Firebase.firestore, Firebase.functions,
// no -ktx artifacts): com.google.firebase:firebase-firestore and firebase-functions from the Firebase
// BoM, plus kotlinx-coroutines-play-services for Task.await().
//
// What each model does, as the web client does: nothing before the first snapshot, nothing for a counter
// that does not exist, one key per tap retried on everything but a refusal (8 attempts, backoff 250 ms
// doubling to 8 s, equal jitter), every tap settled (its writeTime, or taken back, also when the scope is
// cancelled), listeners removed by close(). The retry table of docs/native.md ("What a lost connection looks
// like") says why INTERNAL and exceptions that are not FirebaseFunctionsException are retried.
//
// Sources (github.com/firebase/firebase-android-sdk):
// - firebase-functions/src/main/java/com/google/firebase/functions/Functions.kt:
//   fun Firebase.functions(regionOrCustomDomain: String): FirebaseFunctions; FirebaseFunctions.kt:
//   getHttpsCallable(name), and call(...): an IOException from OkHttp becomes Code.INTERNAL
//   (InterruptedIOException: DEADLINE_EXCEEDED), while a failed contextProvider.getContext(...) task (the
//   ID token) fails the call with its own exception; HttpsCallableReference.kt: fun call(data: Any?):
//   Task<HttpsCallableResult>; HttpsCallableResult.kt: data: Any?; FirebaseFunctionsException.kt:
//   code: Code and enum class Code (INVALID_ARGUMENT, ... DATA_LOSS).
// - firebase-firestore/src/main/java/com/google/firebase/firestore/Firestore.kt: Firebase.firestore;
//   DocumentReference.java: addSnapshotListener(EventListener<DocumentSnapshot>),
//   addSnapshotListener(MetadataChanges, EventListener<DocumentSnapshot>), collection(String);
//   DocumentSnapshot.java: exists(), getLong(String), getBoolean(String), getTimestamp(String),
//   getMetadata(); SnapshotMetadata.java: isFromCache(); MetadataChanges.java: INCLUDE;
//   ListenerRegistration.java: remove(); FirebaseFirestore.java: ListenerRegistration
//   addSnapshotsInSyncListener(Runnable runnable), on Executors.DEFAULT_CALLBACK_EXECUTOR (the main
//   thread).
// - firebase-common/src/main/java/com/google/firebase/Timestamp.kt: class Timestamp(seconds: Long,
//   nanoseconds: Int) : Comparable<Timestamp> (throws on out-of-range values).
// - Kotlin standard library: ArrayDeque, Pair.

import com.google.firebase.Firebase
import com.google.firebase.Timestamp
import com.google.firebase.firestore.DocumentSnapshot
import com.google.firebase.firestore.MetadataChanges
import com.google.firebase.firestore.firestore
import com.google.firebase.functions.FirebaseFunctionsException
import com.google.firebase.functions.FirebaseFunctionsException.Code
import com.google.firebase.functions.functions
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.launch
import kotlinx.coroutines.tasks.await
import java.util.UUID
import kotlin.random.Random

/** The codes that refuse a call: the tap is taken back. Every other failure is retried. */
private val REFUSALS = setOf(Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.UNAUTHENTICATED,
    Code.FAILED_PRECONDITION, Code.ALREADY_EXISTS, Code.OUT_OF_RANGE, Code.UNIMPLEMENTED, Code.CANCELLED, Code.DATA_LOSS)

/**
 * One counter on screen. `shown` is null before the first snapshot and while the counter does not
 * exist. `scope` runs on Dispatchers.Main, where the listener runs too; call close() when done.
 */
class CounterModel(private val counterId: String, private val scope: CoroutineScope) {
    val shown = MutableStateFlow<Long?>(null)
    private class Own(val delta: Long, val sentAfter: Timestamp?, var writeTime: Timestamp? = null)
    private class Latest(val exists: Boolean, val total: Long, val coveredUntil: Timestamp?)
    private var latest: Latest? = null                  // null until the first snapshot
    private var seenUntil: Timestamp? = null            // the newest coveredUntil of any snapshot received
    private val own = mutableMapOf<String, Own>()
    private val increment = Firebase.functions("us-central1").getHttpsCallable("incrementCounter")
    private val registration = Firebase.firestore.collection("counters").document(counterId)
        .addSnapshotListener { snap, _ ->
            if (snap == null) return@addSnapshotListener   // a listen error: keep showing the last value
            if (!snap.exists()) {
                latest = Latest(false, 0, null)               // deleted, or not created yet
            } else {
                val c = listOfNotNull(snap.getTimestamp("rollup.readTime"), snap.getTimestamp("createdAt")).maxOrNull()
                // Older than one already seen (a cache): skip it, so that taps already dropped as covered
                // are never needed again.
                val seen = seenUntil
                if (seen != null && (c == null || c < seen)) return@addSnapshotListener
                seenUntil = c
                latest = Latest(true, snap.getLong("total") ?: 0, c)
            }
            render()
        }

    fun tap(delta: Long = 1) {
        val requestId = UUID.randomUUID().toString()   // one key per user action, the same on every retry
        own[requestId] = Own(delta, sentAfter = seenUntil)
        render()
        scope.launch {
            try {
                for (attempt in 0 until 8) {
                    try {
                        val data = increment.call(mapOf("counterId" to counterId, "delta" to delta, "requestId" to requestId))
                            .await().data as? Map<*, *>
                        val w = data?.get("writeTime") as? Map<*, *>
                        val seconds = w?.get("seconds") as? Number
                        val nanos = w?.get("nanoseconds") as? Number
                        if (seconds != null && nanos != null) {
                            own[requestId]?.writeTime = Timestamp(seconds.toLong(), nanos.toInt())
                            return@launch
                        }                                 // an answer without a writeTime: retry
                    } catch (e: CancellationException) {
                        throw e
                    } catch (e: FirebaseFunctionsException) {
                        if (e.code in REFUSALS) return@launch   // INTERNAL (a lost connection) and the rest: retry
                    } catch (e: Exception) {
                        // Not a callable error: a token fetch that failed offline (ExecutionException), an
                        // IOException, … Retry.
                    }
                    val capMs = minOf(8_000L, 250L shl attempt)
                    delay(capMs / 2 + Random.nextLong(capMs / 2 + 1))
                }
            } finally {
                // Refused, out of attempts, or the scope was cancelled: take the tap back.
                if (own[requestId]?.writeTime == null) own.remove(requestId)
                render()
            }
        }
    }

    private fun render() {
        val l = latest ?: return                         // nothing before the first snapshot
        if (!l.exists) { shown.value = null; return }    // deleted, or not created yet
        var mine = 0L
        val c = l.coveredUntil
        for ((id, inc) in own.entries.toList()) {
            val w = inc.writeTime
            val sent = inc.sentAfter
            when {
                w != null && c != null && w <= c -> own.remove(id)   // in total now
                w != null || c == null || (sent != null && c <= sent) -> mine += inc.delta
                else -> return   // this snapshot may already hold the in-flight tap: wait for its answer
            }
        }
        shown.value = l.total + mine
    }

    fun close() = registration.remove()
}

/**
 * A like button on a unique counter. `shown` is (count, liked): null before a snapshot that tells the
 * count, count null while the counter does not exist. `scope` runs on Dispatchers.Main, where the
 * listeners run too; call close() when done.
 */
class LikeModel(private val counterId: String, uid: String, private val scope: CoroutineScope) {
    val shown = MutableStateFlow<Pair<Long?, Boolean>?>(null)
    private class Counter(val exists: Boolean, val total: Long, val coveredUntil: Timestamp?, val fromCache: Boolean)
    private class Record(val member: Boolean, val changedAt: Timestamp?, val previousChangedAt: Timestamp?)
    private class Synced(val exists: Boolean, val record: Record?, val server: Boolean)
    private class Change(val member: Boolean, val writeTime: Timestamp)
    private var counter: Counter? = null
    private var record: Pair<Record?, Boolean>? = null        // (record, fromCache)
    private var memberDoc: Pair<Boolean, Boolean>? = null     // (exists, fromCache)
    private var seenUntil: Timestamp? = null
    private var synced: Synced? = null                        // the last consistent snapshot
    private var basis: Pair<Long, Long>? = null               // (total, others) of the last snapshot that told M(R)
    private var last: Change? = null                          // the last changed answer, until the record has it
    private val calls = ArrayDeque<Boolean>()                 // taps not answered yet; calls.first() is in flight
    private val setMember = Firebase.functions("us-central1").getHttpsCallable("setMember")
    private val ref = Firebase.firestore.collection("counters").document(counterId)
    private val registrations = listOf(
        ref.addSnapshotListener(MetadataChanges.INCLUDE) { snap, _ -> if (snap != null) counterChanged(snap) },
        ref.collection("memberships").document(uid).addSnapshotListener(MetadataChanges.INCLUDE) { snap, _ ->
            if (snap == null) return@addSnapshotListener
            val r = snap.getBoolean("member")?.let { Record(it, snap.getTimestamp("changedAt"), snap.getTimestamp("previousChangedAt")) }
            record = Pair(r, snap.metadata.isFromCache)             // null: no record
        },
        ref.collection("members").document(uid).addSnapshotListener(MetadataChanges.INCLUDE) { snap, _ ->
            if (snap != null) memberDoc = Pair(snap.exists(), snap.metadata.isFromCache)
        },
        // Every listener has fired for a change: the three documents are one snapshot.
        Firebase.firestore.addSnapshotsInSyncListener { inSync() },
    )

    /** The like to show: the last tap while calls are pending, the last answer until the record has it, else the server's. */
    val liked: Boolean get() = calls.lastOrNull() ?: last?.member ?: synced?.server ?: false

    fun tap() {
        calls.addLast(!liked)
        render()
        if (calls.size == 1) scope.launch { sendAll() }  // else the running sendAll() sends it next
    }

    private fun counterChanged(snap: DocumentSnapshot) {
        if (!snap.exists()) { counter = Counter(false, 0, null, snap.metadata.isFromCache); return }
        val c = listOfNotNull(snap.getTimestamp("rollup.readTime"), snap.getTimestamp("createdAt")).maxOrNull()
        val seen = seenUntil
        if (seen != null && (c == null || c < seen)) return    // an older snapshot
        seenUntil = c
        counter = Counter(true, snap.getLong("total") ?: 0, c, snap.metadata.isFromCache)
    }

    /** M(R): the membership at the total's coverage time, or null when this snapshot cannot tell. */
    private fun membershipAt(r: Timestamp?, record: Record?, memberDoc: Boolean): Boolean? {
        if (r == null) return false                            // the total holds no change
        if (record == null) return memberDoc                   // never changed since records exist
        val c1 = record.changedAt
        if (record.member != memberDoc || c1 == null) return null   // not one state, or no time yet
        if (r >= c1) return record.member
        val c0 = record.previousChangedAt
        return if (c0 != null && r < c0) null else !record.member   // null: two changes the total does not hold
    }

    /** Whether the record holds the change at [w] or a later one (without its time: if the one before is). */
    private fun holds(record: Record?, w: Timestamp): Boolean {
        if (record == null) return false
        record.changedAt?.let { return it >= w }
        return record.previousChangedAt?.let { it >= w } ?: false
    }

    private fun inSync() {
        val c = counter ?: return
        val (r, recordFromCache) = record ?: return
        val (doc, docFromCache) = memberDoc ?: return
        if (c.fromCache || recordFromCache || docFromCache) return   // from the server only
        synced = Synced(c.exists, r, r?.member ?: doc)
        if (!c.exists) basis = null
        else membershipAt(c.coveredUntil, r, doc)?.let { m -> basis = Pair(c.total, c.total - if (m) 1 else 0) }
        last?.let { if (holds(r, it.writeTime)) last = null }
        render()
    }

    private suspend fun sendAll() {
        try {
            while (calls.isNotEmpty()) {
                val member = calls.first()
                var answer: Map<*, *>? = null
                try {
                    for (attempt in 0 until 8) {
                        try {
                            val data = setMember.call(mapOf("counterId" to counterId, "member" to member)).await().data as? Map<*, *>
                            if (data?.get("changed") == false || writeTimeOf(data) != null) { answer = data; break }
                        } catch (e: CancellationException) {
                            throw e
                        } catch (e: FirebaseFunctionsException) {
                            if (e.code in REFUSALS) break       // INTERNAL (a lost connection) and the rest: retry
                        } catch (e: Exception) {
                            // Not a callable error (a token fetch that failed offline, …): retry.
                        }
                        val capMs = minOf(8_000L, 250L shl attempt)
                        delay(capMs / 2 + Random.nextLong(capMs / 2 + 1))
                    }
                } finally {
                    calls.removeFirst()
                    val w = writeTimeOf(answer)
                    if (w != null) last = if (holds(synced?.record, w)) null else Change(member, w)
                    else if (answer != null && last?.member != member) last = null  // unchanged: the record tells
                    render()
                }
            }
        } finally {
            calls.clear()                                // the scope was cancelled: no tap stays pending
            render()
        }
    }

    private fun writeTimeOf(data: Map<*, *>?): Timestamp? {
        if (data?.get("changed") != true) return null
        val w = data["writeTime"] as? Map<*, *>
        val seconds = w?.get("seconds") as? Number
        val nanos = w?.get("nanoseconds") as? Number
        return if (seconds != null && nanos != null) Timestamp(seconds.toLong(), nanos.toInt()) else null
    }

    private fun render() {
        val s = synced ?: return                        // nothing before the first consistent snapshot
        if (!s.exists) { shown.value = Pair(null, liked); return }
        val b = basis ?: return                         // no snapshot has told M(R) yet
        shown.value = Pair(b.second + if (liked) 1 else 0, liked)
    }

    fun close() = registrations.forEach { it.remove() }
}
