/* A model of the exactly-once HTTP protocol (proto-spec/README.md), for the Spin model checker.

   One client runtime carries out K invocations, each in up to A handler attempts (a fresh id per
   attempt), against one server. Every step of either side is one atomic transition; Spin explores
   every interleaving of them:
   - the network delays, reorders, duplicates and drops requests and loses answers;
   - the client crashes (or times out) between any two steps: what it had not committed is gone,
     the journal of uncommitted PUTs survives and turns each such id into a cleanup DELETE;
   - the server commits PUTs and DELETEs WITHOUT flushing them and answers at once; a POST
     execution and a decision that an unknown id is too old (persist_too_old) are FLUSHED commits,
     synced in the background (pipelined sync): committed at once, visible to every later
     request, and made durable by a sync, a server transition of its own that may come at any
     moment while such a commit is pending (or a posted bit, below, is set); a sync makes every
     commit before it durable (the WAL is written in order). Answers that depend on a flushed commit are HELD until a sync: while
     one is pending, every POST answer and every too-old answer (PUT, POST, the DELETE that
     persisted its time) waits for the sync, which delivers it. A GET waits only as the server
     makes it: the server keeps a bit per id (posted), set when it serves a POST of the id,
     whatever the answer, and cleared for every id by a sync or a crash; a GET of an id whose bit
     is set is held until the next sync, any other GET answers at once, even while flushed commits
     of other ids await their sync (an execution not yet durable came from a POST of its id since
     the last sync, so a GET that reads one is always held). Other PUT and DELETE answers go out
     at once, even about an execution no sync has made durable yet. The sweeper flushes
     its own commits at once: its flush is a sync, of every pending commit too, and delivers the
     held answers. A server crash (at most CRASHES of them, at any moment) takes back every commit
     since the last sync, executions included, and loses the held answers with their
     connections; the highest time the server has used survives it (with VOLATILE_HW: only as
     persisted by the last sweep or synced too-old decision);
   - time moves on; the sweeper expires staged requests (staged TTL), stored responses (response
     retention) and purges tombstones (acceptance window), at any moment;
   - the server clock may run FAST for a while and then be set back; the server keeps the highest
     time it has used and never decides with an earlier one (the rule the spec adopts);
   - a second principal may PUT or DELETE any id (ownership).

   With EARLY_GET the client may also GET its id while its POST is unanswered, and takes a stored
   response in the GET's answer as the POST's outcome (its other answers it ignores). Without it
   the client GETs only after its POST answered, which the server sent after a sync that covered
   the execution, so no GET the client sends is ever held.

   The client keeps the body of its PUT with the committed invocation; a 404 to its POST makes it
   PUT the same id again (re-PUT, state C_REPUT), and POST again after a 201/200, a 410
   request-consumed, a 404 or no answer; a 410 request-too-old to the re-PUT or a 410 to the POST
   (or a 404/410 to the GET) sends the message to the error queue, and its id is still DELETEd.
   With UNAWAITED_PUT the handler may also commit with its PUT unanswered (C_AWAIT, rule 9,
   put_wait::never): it POSTs at once, and the PUT's answer changes nothing (a 404 to the POST
   leads to the re-PUT).

   Checked in every state: an invocation executes at most once (counting the executions no crash
   took back); an id consumed (executed or tombstoned) by a commit that no crash took back is
   never staged again; an invocation whose message went to the error queue never executes
   afterwards; a follow-up commits at most once. A tombstone that a crash took back may be staged
   again by a delayed PUT (an orphan: never POSTed, it expires by its staged TTL). Checked when a
   run quiesces (the client has nothing left to do and no request is in flight): the server holds
   no staged or executed row of the client's except of an id of which a crash took back a commit
   (a DELETE, or another principal's PUT or DELETE that had refused the client's PUT; the sweeper
   reclaims such a row by staged TTL or response retention, like any row), and if no message went
   to the error queue, each invocation executed exactly once (an execution no crash took back)
   and its follow-up ran once.

   Broken variants, each of which must fail (see check.sh): BROKEN_WINDOW (PUT ignores the
   acceptance window), BROKEN_PURGE (tombstones purged without waiting), BROKEN_REINVOKE (the
   client re-invokes under a new id after a 404/410 to its POST), BROKEN_CLOCK (decisions use the
   raw server clock after it was set back), BROKEN_NO_REPUT (a 404 to the POST sends the message
   to the error queue), BROKEN_UNFLUSHED_SWEEP (the sweeper's commits are not flushed either),
   BROKEN_VOLATILE_TOO_OLD (a too-old decision's time is left to the next sweep),
   BROKEN_UNHELD_ANSWER (POST and GET answers go out at once, before the sync of the execution
   they report), BROKEN_GET_UNTRACKED (GET answers go out at once, the posted bits ignored; POST
   answers are still held: it fails with EARLY_GET), BROKEN_AWAIT_POST (with UNAWAITED_PUT, the
   POST goes out before the PUT's answer, and a refusal in that answer still error-queues the
   message). */

#ifndef K
#define K 1 /* invocations */
#endif
#ifndef A
#define A 2 /* handler attempts per invocation, one id each */
#endif
#define N (K * A) /* ids */

#ifndef W
#define W 1 /* acceptance window */
#endif
#define TTL 1 /* staged TTL */
#define RET 1 /* response retention */
#ifndef TMAX
#define TMAX 4 /* how far true time runs */
#endif
#define FAST 2 /* how far ahead the server clock runs before it is set back */
#ifndef CRASHES
#define CRASHES 1 /* server crashes */
#endif

/* verbs */
#define PUT 0
#define POST 1
#define GET 2
#define DEL 3

/* server row states */
#define UNKNOWN 0
#define STAGED 1
#define EXECUTED 2
#define TOMB 3

/* principals */
#define NOBODY 0
#define CLIENT 1
#define OTHER 2

/* answers the client sees (0: none yet) */
#define NONE 0
#define STAGED_OK 1 /* 201, or 200 for the same PUT again */
#define OUTCOME 2   /* a stored response, executed or replayed */
#define NO_CONTENT 3
#define NOT_FOUND 4 /* 404 request-unknown */
#define GONE 5      /* 410: consumed, expired, response expired */
#define CONFLICT 6  /* 409 not-executed, request-mismatch */
#define TOO_OLD 7   /* 410 request-too-old */

/* client invocation states */
#define C_NEW 0     /* message queued, no attempt in progress */
#define C_PUTTING 1 /* handler attempt running: PUT sent, nothing committed */
#define C_POST 2    /* committed: POST pending */
#define C_FOLLOW 3  /* POST answered: follow-up queued, GET pending */
#define C_DEL 4     /* follow-up committed: DELETE pending */
#define C_DONE 5
#define C_ERROR 6   /* in the error queue */
#define C_REPUT 7   /* a 404 to the POST: the same id PUT again, then POST */
#define C_AWAIT 8   /* UNAWAITED_PUT: committed with its PUT unanswered */

/* server: what it has committed (a crash takes back what no sync made durable) */
byte st[N];
byte since[N]; /* when the row entered its state */
byte owner[N];
byte hw;       /* the highest time the server has used */
bool consumed[N]; /* ghost: executed or tombstoned */
byte executions[K]; /* ghost: the invocation's executions (committed with the row) */
bool pending;  /* a flushed commit awaits its sync */
byte posted;   /* bit i: a POST of id i was served since the last sync (posted_unsynced) */
#ifdef VOLATILE_HW
byte chw;      /* the time persisted by a too-old decision whose sync is pending (0: none) */
#endif
/* server: what is durable (as of the last sync; hw as of the last sweep or too-old decision) */
byte dst[N];
byte dsince[N];
byte downer[N];
byte dhw;
bool dconsumed[N];
byte dexecutions[K];
byte crashes;
/* server: answers held until the next sync (lost in a crash): to the current step of each
   invocation, and to cleanup DELETEs */
byte held[K];
bool held_clean[N];
/* client ids' timestamps (client clock = true time) */
byte idts[N];
/* true time and the server clock's offset phase: 0 right, 1 fast, 2 set back */
byte t;
byte clock_phase;
/* network: whether a copy of each (id, verb) request is in flight; delivering one may leave
   another in flight (a duplicate), so any number of copies arrive, at any later time */
bool req[N * 4];
/* answers that reached the client: to the current step of each invocation, and to cleanups */
byte got[K];
bool cleaned[N];
/* client, durable unless said otherwise */
byte cst[K];
byte cid[K];
byte att[K];
bool cleanup[N]; /* a DELETE owed for an id of an attempt that did not commit */
bool other_acted;
/* ghosts: what happened, for the invariants */
byte follow_ups[K];
bool taken_back[N]; /* a crash took back a commit of the id */
bool queued[K];  /* the invocation's message went to the error queue */
bool error_queued;

#define POSTED(i) ((posted >> (i)) & 1)

#define SERVER_NOW (t + (clock_phase == 1 -> FAST : 0))
#ifdef BROKEN_CLOCK
#define DECISION_TIME SERVER_NOW
#else
#define DECISION_TIME (SERVER_NOW > hw -> SERVER_NOW : hw)
#endif


inline begin_server_step() {
  dnow = DECISION_TIME;
#ifdef CLOCK_STEP /* (without a step back, the highest time used is the clock's, and hw unused) */
  if
  :: dnow > hw -> hw = dnow
  :: else -> skip
  fi
#endif
}

/* Storage makes every commit so far durable (commits are durable in commit order). */
inline flush() {
  if
  :: crashes < CRASHES -> /* (after the last crash, nothing reads the durable copy) */
    for (j : 0 .. N - 1) {
      dst[j] = st[j];
      dsince[j] = since[j];
      downer[j] = owner[j];
      dconsumed[j] = consumed[j]
    }
    j = 0;
    for (k : 0 .. K - 1) {
      dexecutions[k] = executions[k]
    }
    k = 0
  :: else -> skip
  fi
}

/* A sync (pipelined, in the background, at any moment after a flushed commit or a POST; or the
   sweeper's own flush): every commit before it becomes durable, the answers held for it go out,
   and no id counts as POSTed since the last sync any more. */
inline sync() {
  flush();
#ifdef VOLATILE_HW
  if
  :: crashes < CRASHES && chw > dhw -> dhw = chw
  :: else -> skip
  fi;
  chw = 0;
#endif
  pending = false;
  posted = 0;
  for (k : 0 .. K - 1) {
    if
    :: held[k] != NONE -> got[k] = held[k]; held[k] = NONE
    :: else -> skip
    fi
  }
  k = 0;
  for (j : 0 .. N - 1) {
    if
    :: held_clean[j] -> cleaned[j] = cleaned[j] || cleanup[j]; held_clean[j] = false
    :: else -> skip
    fi
  }
  j = 0
}

/* A flushed commit: committed at once (visible to every later request), durable at the next
   sync; the answers that depend on it wait for that sync (in the network transition). */
inline flushed_commit() {
  pending = true
}

/* A decision that an unknown id is too old (PUT or POST refused, DELETE writing nothing) holds
   only while the time it used is never forgotten: the server persists that time in a flushed
   commit, and its answer waits for the sync. BROKEN_VOLATILE_TOO_OLD leaves it to the next
   sweep (and answers at once). */
inline persist_too_old() {
#ifndef BROKEN_VOLATILE_TOO_OLD
  flushed_commit();
  too_old = true;
#ifdef VOLATILE_HW
  if
  :: crashes < CRASHES -> chw = hw /* (after the last crash, nothing reads it) */
  :: else -> skip
  fi;
#endif
#endif
  skip
}

/* A server crash: the commits since the last sync are lost (executions too), and the time
   used since it was last persisted; the held answers are lost with their connections; the server
   starts again from what is durable. */
inline crash() {
  for (j : 0 .. N - 1) {
    if
    :: st[j] != dst[j] || owner[j] != downer[j] -> taken_back[j] = true
    :: else -> skip
    fi;
    st[j] = dst[j];
    since[j] = dsince[j];
    owner[j] = downer[j];
    consumed[j] = dconsumed[j];
    held_clean[j] = false
  }
  j = 0;
  for (k : 0 .. K - 1) {
    executions[k] = dexecutions[k];
    held[k] = NONE
  }
  k = 0;
  pending = false;
  posted = 0;
#ifdef VOLATILE_HW
  hw = dhw;
  chw = 0;
#endif
  if
  :: crashes == CRASHES -> /* the durable copy is read no more: forget it (fewer states) */
    for (j : 0 .. N - 1) {
      dst[j] = 0; dsince[j] = 0; downer[j] = 0; dconsumed[j] = false
    }
    j = 0;
    for (k : 0 .. K - 1) {
      dexecutions[k] = 0
    }
    k = 0;
    dhw = 0
  :: else -> skip
  fi
}

inline error_queue(k, i) {
  cst[k] = C_ERROR; error_queued = true; queued[k] = true; cleanup[i] = true /* id still DELETEd */
}

inline stage(i, who) {
  assert(!consumed[i]); /* an id executed or tombstoned (and no crash took it back) is never
                           staged again */
  st[i] = STAGED;
  since[i] = dnow;
  owner[i] = who
}

inline tombstone(i) {
  st[i] = TOMB;
  since[i] = dnow;
  consumed[i] = true
}

/* The server carries out one request of principal `who` for id i, verb v; answer in `a`. */
inline serve(i, v, who, a) {
  begin_server_step();
  if
  :: v == POST -> posted = posted | (1 << i) /* whatever the outcome: a GET of i now waits */
  :: else -> skip
  fi;
  if
  :: st[i] != UNKNOWN && owner[i] != who -> a = NOT_FOUND /* another principal's id */
  :: else ->
    if
    :: v == PUT ->
      if
      :: st[i] == UNKNOWN ->
#ifdef BROKEN_WINDOW
        stage(i, who); a = STAGED_OK
#else
        if
        :: idts[i] + W < dnow -> persist_too_old(); a = TOO_OLD
        :: else -> stage(i, who); a = STAGED_OK
        fi
#endif
      :: st[i] == STAGED -> a = STAGED_OK
      :: else -> a = GONE /* request-consumed */
      fi
    :: v == POST ->
      if
      :: st[i] == STAGED ->
        st[i] = EXECUTED;
        since[i] = dnow;
        consumed[i] = true;
        if
        :: who == CLIENT ->
          executions[i / A]++;
          assert(executions[i / A] <= 1); /* an invocation executes at most once */
          assert(!queued[i / A])          /* and never after its message went to the error queue */
        :: else -> skip
        fi;
        flushed_commit(); /* an execution is flushed: its answer waits for the sync */
        a = OUTCOME
      :: st[i] == EXECUTED -> a = OUTCOME
      :: st[i] == UNKNOWN && idts[i] + W < dnow -> persist_too_old(); a = TOO_OLD
      :: st[i] == UNKNOWN && idts[i] + W >= dnow -> a = NOT_FOUND
      :: st[i] == TOMB -> a = GONE
      fi
    :: v == GET ->
      if
      :: st[i] == EXECUTED -> a = OUTCOME
      :: st[i] == STAGED -> a = CONFLICT
      :: st[i] == UNKNOWN && idts[i] + W < dnow -> a = TOO_OLD
      :: st[i] == UNKNOWN && idts[i] + W >= dnow -> a = NOT_FOUND
      :: st[i] == TOMB -> a = GONE
      fi
    :: v == DEL ->
      if
      :: st[i] == STAGED || st[i] == EXECUTED -> tombstone(i)
      :: st[i] == UNKNOWN && idts[i] + W >= dnow -> tombstone(i); owner[i] = who
      :: st[i] == UNKNOWN && idts[i] + W < dnow -> persist_too_old() /* writes nothing else */
      :: else -> skip
      fi;
      a = NO_CONTENT
    fi
  fi
}

inline sweep() {
  begin_server_step();
  j = 0;
  do
  :: j < N ->
    if
    :: st[j] == STAGED && since[j] + TTL < dnow -> tombstone(j)
    :: st[j] == EXECUTED && since[j] + RET < dnow -> tombstone(j)
#ifdef BROKEN_PURGE
    :: st[j] == TOMB -> st[j] = UNKNOWN; owner[j] = NOBODY
#else
    :: st[j] == TOMB && idts[j] + W < dnow && since[j] + W < dnow -> st[j] = UNKNOWN; owner[j] = NOBODY
#endif
    :: else -> skip
    fi;
    j++
  :: else -> break
  od;
  j = 0;
#ifndef BROKEN_UNFLUSHED_SWEEP
  /* a sweep is flushed at once, with the time it used: a sync, of every commit before it too */
#ifdef VOLATILE_HW
  chw = hw;
#endif
  sync()
#endif
}

/* The client sends (another copy of) request (i, v). */
inline send(i, v) {
  req[i * 4 + v] = true
}

inline quiescent_check() {
  k = 0;
  do
  :: k < K ->
    assert(follow_ups[k] <= 1);
    if
    :: !error_queued ->
      assert(executions[k] == 1); /* each committed invocation executed exactly once */
      assert(follow_ups[k] == 1)  /* and its follow-up ran once */
    :: else -> skip
    fi;
    k++
  :: else -> break
  od;
  j = 0;
  do
  :: j < N ->
    /* only tombstones, but for ids of which a crash took back a commit: a DELETE's tombstone
       (the row it replaced is back), or a staging or tombstone of another principal's that had
       refused the client's PUT (a delayed copy of it may then stage the id, which the client
       never POSTs); the sweeper reclaims such rows by staged TTL or response retention, as it
       does every row never DELETEd */
    assert(!(owner[j] == CLIENT && (st[j] == STAGED || st[j] == EXECUTED)) || taken_back[j]);
    j++
  :: else -> break
  od
}

/* Each choice of world() below that acts on a request, an invocation or an id is enabled only
   where it changes the state (a copy of the request in flight, the invocation neither done nor in
   the error queue, a cleanup DELETE owed, nothing left to do), by an `if` over the candidates as
   its first statement: no transition leads back to the state it left, which halves the
   transitions Spin explores (a `select` of any candidate, then `else -> skip`, made 26 per state
   stored). The lists cover K = 1 or 2 invocations over N = 2 or 4 ids. */
#if N == 2
#define EACH_REQUEST(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
#define EACH_ID(F) F(0) F(1)
#elif N == 4
#define EACH_REQUEST(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) \
  F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
#define EACH_ID(F) F(0) F(1) F(2) F(3)
#else
#error "world() lists the requests of N = K * A = 2 or 4 ids"
#endif
#if K == 1
#define EACH_INVOCATION(F) F(0)
#elif K == 2
#define EACH_INVOCATION(F) F(0) F(1)
#else
#error "world() lists K = 1 or 2 invocations"
#endif
#define IN_FLIGHT(R) :: req[R] -> i = (R) / 4; v = (R) % 4
#define SETTLED(K0) (cst[K0] == C_DONE || cst[K0] == C_ERROR)
#define UNSETTLED(K0) :: !SETTLED(K0) -> k = K0
#define OWES_CLEANUP(I) :: cleanup[I] -> i = I
/* quiescence: no invocation unsettled, no request in flight, no cleanup DELETE owed */
#define OR_UNSETTLED(K0) || !SETTLED(K0)
#define OR_BUSY(I) || req[(I) * 4] || req[(I) * 4 + 1] || req[(I) * 4 + 2] || req[(I) * 4 + 3] \
  || cleanup[I]
#define QUIET (!(false EACH_INVOCATION(OR_UNSETTLED) EACH_ID(OR_BUSY)))

active proctype world() {
  byte i, v, k, j, a, old;
  byte dnow; /* the decision time of the server step in progress */
  bool too_old; /* the server step persisted a too-old decision */
  bool hold;    /* its answer waits for the next sync */
  do
  /* ---- time and the server clock ---- */
  :: atomic { t < TMAX -> t++ }
#ifdef CLOCK_STEP
  :: atomic { clock_phase < 2 -> clock_phase++ }
#endif
  /* ---- the server's sweeper ---- */
  :: atomic { sweep(); dnow = 0 }
  /* ---- a server crash ---- */
  :: atomic { crashes < CRASHES -> crashes++; crash() }
  /* ---- the server's background sync of the flushed commits (and of a GET's wait) ---- */
  :: atomic { pending || posted != 0 -> sync() }
  /* ---- the network: deliver a copy (answer kept or lost; another copy may stay), drop one ---- */
  :: atomic {
       if
       EACH_REQUEST(IN_FLIGHT)
       fi;
       if
       :: req[i * 4 + v] = false
       :: skip /* a duplicate stays in flight */
       fi;
       serve(i, v, CLIENT, a);
       /* while a flushed commit awaits its sync, POST answers and too-old decisions wait for
          it; a GET waits for it if a POST of its id was served since the last sync (an
          execution not yet durable came from one); other answers go out at once */
#ifdef BROKEN_UNHELD_ANSWER
       hold = pending && too_old && (v == PUT || v == DEL);
#else
#ifdef BROKEN_GET_UNTRACKED
       hold = pending && (v == POST || too_old);
#else
       hold = (pending && (v == POST || too_old)) || (v == GET && POSTED(i));
#endif
#endif
       if
       :: skip /* the answer is lost */
       :: v == DEL && cleanup[i] && (a == NO_CONTENT || a == NOT_FOUND) ->
         if
         :: hold -> held_clean[i] = true
         :: else -> cleaned[i] = true
         fi
       :: cid[i / A] == i && ((v == PUT && (cst[i / A] == C_PUTTING || cst[i / A] == C_REPUT ||
                                            cst[i / A] == C_AWAIT)) ||
            (v == POST && cst[i / A] == C_POST) ||
#ifdef EARLY_GET /* a GET's stored response is the POST's outcome; its other answers are ignored */
            (v == GET && cst[i / A] == C_POST && a == OUTCOME) ||
#endif
            (v == GET && cst[i / A] == C_FOLLOW) || (v == DEL && cst[i / A] == C_DEL)) ->
         if
         :: hold -> held[i / A] = a
         :: else -> got[i / A] = a
         fi
       fi;
       i = 0; v = 0; a = NONE; dnow = 0; too_old = false; hold = false
     }
  :: atomic {
       if
       EACH_REQUEST(IN_FLIGHT)
       fi;
       req[i * 4 + v] = false; /* dropped */
       i = 0; v = 0
     }
#ifdef OTHER_PRINCIPAL
  /* ---- another principal PUTs or DELETEs any id, once ---- */
  :: atomic {
       !other_acted ->
       other_acted = true;
       select(i : 0 .. N - 1);
       if
       :: att[i / A] > i % A -> /* ids the client has minted */
         if
         :: serve(i, PUT, OTHER, a)
         :: serve(i, DEL, OTHER, a)
         fi
       :: else -> skip
       fi;
       i = 0; a = NONE; dnow = 0; too_old = false
     }
#endif
  /* ---- the client runtime: one step of one invocation ---- */
  :: atomic {
       if
       EACH_INVOCATION(UNSETTLED)
       fi;
       old = cst[k];
       if
       :: cst[k] == C_NEW && att[k] < A -> /* a handler attempt: mint, journal and PUT an id */
         i = k * A + att[k];
         att[k]++;
         idts[i] = t;
         cid[k] = i;
         send(i, PUT);
         cst[k] = C_PUTTING
       :: cst[k] == C_NEW && att[k] == A -> cst[k] = C_ERROR; error_queued = true; queued[k] = true
       :: cst[k] == C_PUTTING ->
         i = cid[k];
         if
         :: got[k] == STAGED_OK -> cst[k] = C_POST /* the handler commits */
         :: got[k] != NONE && got[k] != STAGED_OK ->
           cleanup[i] = true; cst[k] = C_NEW /* refused: the attempt fails */
         :: send(i, PUT) /* no answer yet: send again */
         :: cleanup[i] = true; cst[k] = C_NEW /* timeout or crash: the journal owes a DELETE */
#ifdef UNAWAITED_PUT
         :: cst[k] = C_AWAIT /* put_wait::never: the handler commits, its PUT unanswered */
#endif
         fi
#ifdef UNAWAITED_PUT
       :: cst[k] == C_AWAIT ->
         i = cid[k];
         if
         :: cst[k] = C_POST /* the POST goes out at once; the PUT's answer changes nothing */
#ifdef BROKEN_AWAIT_POST
         :: send(i, POST) /* a POST before the PUT's answer, which may then decide: */
         :: got[k] != NONE && got[k] != STAGED_OK -> error_queue(k, i) /* refused: error queue */
#endif
         fi
#endif
       :: cst[k] == C_POST ->
         i = cid[k];
         if
         :: got[k] == OUTCOME -> cst[k] = C_FOLLOW /* follow-up queued */
#ifdef BROKEN_REINVOKE
         :: got[k] == NOT_FOUND || got[k] == GONE || got[k] == TOO_OLD ->
           cst[k] = C_NEW /* re-invoked under a new id */
#else
#ifdef BROKEN_NO_REPUT
         :: got[k] == NOT_FOUND || got[k] == GONE || got[k] == TOO_OLD -> error_queue(k, i)
#else
         :: got[k] == NOT_FOUND -> send(i, PUT); cst[k] = C_REPUT /* the kept body PUT again */
         :: got[k] == GONE || got[k] == TOO_OLD -> error_queue(k, i)
#endif
#endif
         :: send(i, POST) /* unanswered, or a crash after commit: POST (again) */
#ifdef EARLY_GET
         :: send(i, GET) /* unanswered: fetch the stored response, if there is one yet */
#endif
         fi
       :: cst[k] == C_REPUT ->
         i = cid[k];
         if
         :: got[k] == TOO_OLD -> error_queue(k, i)
         :: got[k] != NONE && got[k] != TOO_OLD -> cst[k] = C_POST /* 201, 200, 410 consumed, 404 */
         :: send(i, PUT) /* no answer yet: send again */
         :: cst[k] = C_POST /* no answer, timeout or a crash: POST again */
         fi
       :: cst[k] == C_FOLLOW ->
         i = cid[k];
         if
         :: got[k] == OUTCOME -> /* the follow-up commits with its DELETE owed */
           follow_ups[k]++;
           assert(follow_ups[k] <= 1);
           cst[k] = C_DEL
         :: got[k] == NOT_FOUND || got[k] == GONE || got[k] == TOO_OLD -> error_queue(k, i)
         :: send(i, GET) /* unanswered, or a crash before the follow-up committed */
         fi
       :: cst[k] == C_DEL ->
         i = cid[k];
         if
         :: got[k] == NO_CONTENT || got[k] == NOT_FOUND -> cst[k] = C_DONE
         :: send(i, DEL)
         fi
       fi;
       if
       :: cst[k] != old -> got[k] = NONE; held[k] = NONE /* a new step waits for its own answer */
       :: else -> skip
       fi;
       i = 0; k = 0; old = 0
     }
  /* ---- the client's cleanup DELETEs of ids whose attempt did not commit ---- */
  :: atomic {
       if
       EACH_ID(OWES_CLEANUP)
       fi;
       if
       :: cleaned[i] -> cleanup[i] = false; cleaned[i] = false
       :: send(i, DEL)
       fi;
       i = 0
     }
  /* ---- quiescence: nothing owed by the client, nothing in flight ---- */
  :: atomic { QUIET -> quiescent_check(); break }
  od
}
