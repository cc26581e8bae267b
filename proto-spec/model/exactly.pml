/* A model of the exactly-once HTTP protocol (proto-spec/README.md), for the Spin model checker.

   One client runtime carries out K invocations, each in up to A handler attempts (a fresh id per
   attempt), against one server. Every step of either side is one atomic transition; Spin explores
   every interleaving of them:
   - the network delays, reorders, duplicates and drops requests and loses answers;
   - the client crashes (or times out) between any two steps: what it had not committed is gone,
     the journal of uncommitted PUTs survives and turns each such id into a cleanup DELETE;
   - the server commits every request durably before it answers (synchronous=FULL, commit groups),
     so a server crash loses exactly what a dropped request or a lost answer loses;
   - time moves on; the sweeper expires staged requests (staged TTL), stored responses (response
     retention) and purges tombstones (acceptance window), at any moment;
   - the server clock may run FAST for a while and then be set back; the server keeps the highest
     time it has used and never decides with an earlier one (the rule the spec adopts);
   - a second principal may PUT or DELETE any id (ownership).

   Checked in every state: an id executes at most once per invocation; a consumed id (executed or
   tombstoned) is never staged again; a follow-up commits at most once. Checked when a run
   quiesces (the client has nothing left to do and no request is in flight): the server holds no
   staged or executed row of the client's (only tombstones), and if no message went to the error
   queue, each invocation executed exactly once and its follow-up ran once. An invocation whose
   POST or GET meets a 404/410 goes to the error queue and its id is still DELETEd.

   Broken variants, each of which must fail (see check.sh): BROKEN_WINDOW (PUT ignores the
   acceptance window), BROKEN_PURGE (tombstones purged without waiting), BROKEN_REINVOKE (the
   client re-invokes under a new id after a 404/410 to its POST), BROKEN_CLOCK (decisions use the
   raw server clock after it was set back). */

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
#define GONE 5      /* 410: too old, consumed, expired, response expired */
#define CONFLICT 6  /* 409 not-executed, request-mismatch */

/* client invocation states */
#define C_NEW 0     /* message queued, no attempt in progress */
#define C_PUTTING 1 /* handler attempt running: PUT sent, nothing committed */
#define C_POST 2    /* committed: POST pending */
#define C_FOLLOW 3  /* POST answered: follow-up queued, GET pending */
#define C_DEL 4     /* follow-up committed: DELETE pending */
#define C_DONE 5
#define C_ERROR 6   /* in the error queue */

/* server, durable */
byte st[N];
byte since[N]; /* when the row entered its state */
byte owner[N];
byte hw;       /* the highest time the server has used */
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
byte executions[K];
byte follow_ups[K];
bool consumed[N];
bool error_queued;

#define SERVER_NOW (t + (clock_phase == 1 -> FAST : 0))
#ifdef BROKEN_CLOCK
#define DECISION_TIME SERVER_NOW
#else
#define DECISION_TIME (SERVER_NOW > hw -> SERVER_NOW : hw)
#endif


inline begin_server_step() {
  dnow = DECISION_TIME;
  if
  :: dnow > hw -> hw = dnow
  :: else -> skip
  fi
}

inline stage(i, who) {
  assert(!consumed[i]); /* a consumed id is never staged again */
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
        :: idts[i] + W < dnow -> a = GONE /* request-too-old */
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
          assert(executions[i / A] <= 1) /* an invocation executes at most once */
        :: else -> skip
        fi;
        a = OUTCOME
      :: st[i] == EXECUTED -> a = OUTCOME
      :: st[i] == UNKNOWN && idts[i] + W < dnow -> a = GONE /* request-too-old */
      :: st[i] == UNKNOWN && idts[i] + W >= dnow -> a = NOT_FOUND
      :: st[i] == TOMB -> a = GONE
      fi
    :: v == GET ->
      if
      :: st[i] == EXECUTED -> a = OUTCOME
      :: st[i] == STAGED -> a = CONFLICT
      :: st[i] == UNKNOWN && idts[i] + W < dnow -> a = GONE /* request-too-old */
      :: st[i] == UNKNOWN && idts[i] + W >= dnow -> a = NOT_FOUND
      :: st[i] == TOMB -> a = GONE
      fi
    :: v == DEL ->
      if
      :: st[i] == STAGED || st[i] == EXECUTED -> tombstone(i)
      :: st[i] == UNKNOWN && idts[i] + W >= dnow -> tombstone(i); owner[i] = who
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
  j = 0
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
    assert(!(owner[j] == CLIENT && (st[j] == STAGED || st[j] == EXECUTED))); /* only tombstones */
    j++
  :: else -> break
  od
}

active proctype world() {
  byte i, v, k, j, a, old;
  byte dnow; /* the decision time of the server step in progress */
  bool quiet;
  do
  /* ---- time and the server clock ---- */
  :: atomic { t < TMAX -> t++ }
#ifdef CLOCK_STEP
  :: atomic { clock_phase < 2 -> clock_phase++ }
#endif
  /* ---- the server's sweeper ---- */
  :: atomic { sweep(); dnow = 0 }
  /* ---- the network: deliver a copy (answer kept or lost; another copy may stay), drop one ---- */
  :: atomic {
       select(i : 0 .. N - 1);
       select(v : 0 .. 3);
       if
       :: req[i * 4 + v] ->
         if
         :: req[i * 4 + v] = false
         :: skip /* a duplicate stays in flight */
         fi;
         serve(i, v, CLIENT, a);
         if
         :: skip /* the answer is lost */
         :: v == DEL && cleanup[i] && (a == NO_CONTENT || a == NOT_FOUND) -> cleaned[i] = true
         :: cid[i / A] == i && ((v == PUT && cst[i / A] == C_PUTTING) || (v == POST && cst[i / A] == C_POST) ||
              (v == GET && cst[i / A] == C_FOLLOW) || (v == DEL && cst[i / A] == C_DEL)) ->
           got[i / A] = a
         fi
       :: else -> skip
       fi;
       i = 0; v = 0; a = NONE; dnow = 0
     }
  :: atomic {
       select(i : 0 .. N - 1);
       select(v : 0 .. 3);
       if
       :: req[i * 4 + v] -> req[i * 4 + v] = false /* dropped */
       :: else -> skip
       fi;
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
       i = 0; a = NONE; dnow = 0
     }
#endif
  /* ---- the client runtime: one step of one invocation ---- */
  :: atomic {
       select(k : 0 .. K - 1);
       old = cst[k];
       if
       :: cst[k] == C_NEW && att[k] < A -> /* a handler attempt: mint, journal and PUT an id */
         i = k * A + att[k];
         att[k]++;
         idts[i] = t;
         cid[k] = i;
         send(i, PUT);
         cst[k] = C_PUTTING
       :: cst[k] == C_NEW && att[k] == A -> cst[k] = C_ERROR; error_queued = true
       :: cst[k] == C_PUTTING ->
         i = cid[k];
         if
         :: got[k] == STAGED_OK -> cst[k] = C_POST /* the handler commits */
         :: got[k] != NONE && got[k] != STAGED_OK ->
           cleanup[i] = true; cst[k] = C_NEW /* refused: the attempt fails */
         :: send(i, PUT) /* no answer yet: send again */
         :: cleanup[i] = true; cst[k] = C_NEW /* timeout or crash: the journal owes a DELETE */
         fi
       :: cst[k] == C_POST ->
         i = cid[k];
         if
         :: got[k] == OUTCOME -> cst[k] = C_FOLLOW /* follow-up queued */
         :: got[k] == NOT_FOUND || got[k] == GONE ->
#ifdef BROKEN_REINVOKE
           cst[k] = C_NEW /* re-invoked under a new id */
#else
           cst[k] = C_ERROR; error_queued = true; cleanup[i] = true /* and its id is DELETEd */
#endif
         :: send(i, POST) /* unanswered, or a crash after commit: POST (again) */
         fi
       :: cst[k] == C_FOLLOW ->
         i = cid[k];
         if
         :: got[k] == OUTCOME -> /* the follow-up commits with its DELETE owed */
           follow_ups[k]++;
           assert(follow_ups[k] <= 1);
           cst[k] = C_DEL
         :: got[k] == NOT_FOUND || got[k] == GONE ->
           cst[k] = C_ERROR; error_queued = true; cleanup[i] = true /* and its id is DELETEd */
         :: send(i, GET) /* unanswered, or a crash before the follow-up committed */
         fi
       :: cst[k] == C_DEL ->
         i = cid[k];
         if
         :: got[k] == NO_CONTENT || got[k] == NOT_FOUND -> cst[k] = C_DONE
         :: send(i, DEL)
         fi
       :: else -> skip
       fi;
       if
       :: cst[k] != old -> got[k] = NONE /* a new step waits for its own answer */
       :: else -> skip
       fi;
       i = 0; k = 0; old = 0
     }
  /* ---- the client's cleanup DELETEs of ids whose attempt did not commit ---- */
  :: atomic {
       select(i : 0 .. N - 1);
       if
       :: cleanup[i] ->
         if
         :: cleaned[i] -> cleanup[i] = false; cleaned[i] = false
         :: send(i, DEL)
         fi
       :: else -> skip
       fi;
       i = 0
     }
  /* ---- quiescence: nothing owed by the client, nothing in flight ---- */
  :: atomic {
       quiet = true;
       for (k : 0 .. K - 1) {
         if
         :: cst[k] != C_DONE && cst[k] != C_ERROR -> quiet = false
         :: else -> skip
         fi
       }
       for (j : 0 .. N * 4 - 1) {
         if
         :: req[j] || (j < N && cleanup[j]) -> quiet = false
         :: else -> skip
         fi
       }
       k = 0; j = 0;
       if
       :: quiet -> quiescent_check(); break
       :: else -> skip
       fi
     }
  od
}
