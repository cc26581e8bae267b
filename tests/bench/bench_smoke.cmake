# A short exactly-bench run whose JSON must hold, for every scenario asked for, a positive ops/s,
# no errors and no client that completed nothing, and a positive median for every ratio named.
#   cmake -DBENCH=<exactly-bench> -DJSON=<file> -DSCENARIOS=a,b -DRATIOS=x/y,... [-DARGS=--x,1]
#         [-DMEMORY_DIR=<tmpfs>] [-DWAL_SYNCS=ON] [-DMIN_P50_MS=N] [-DPHASES=ON]
#         [-DSERVER_STORAGE=ON] [-DPUT_WAIT=<mode>] -P <this>
# MEMORY_DIR: the databases go there (TMPDIR) when it has 512 MiB free, else on the disk.
# WAL_SYNCS (PostgreSQL on a slow disk): every scenario also counted PostgreSQL's WAL syncs, and
# their time, in its measured time.
# MIN_P50_MS: every scenario's median latency is at least this (a delay on the way).
# SERVER_STORAGE: each scenario's flushed commit groups were timed from the server's /metrics (a
# request's mean until answered, the requests a group), and the unflushed ones of those that PUT.
# PHASES: wire's requests and the client's of e2e and the outbox scenarios were timed (a POST's
# mean) and the client's counted (its POSTs per operation), and the outbox dispatchers' batches
# (their COMMIT's mean and their messages).
# PUT_WAIT: the run's e2e_put_wait was this mode.
cmake_minimum_required(VERSION 3.22)
if(MEMORY_DIR)
  execute_process(COMMAND df -Pk ${MEMORY_DIR} OUTPUT_VARIABLE df RESULT_VARIABLE df_status
                  ERROR_QUIET)
  string(REGEX MATCH "[0-9]+ +[0-9]+ +([0-9]+) +[0-9]+%" row "${df}")
  if(df_status EQUAL 0 AND CMAKE_MATCH_1 GREATER_EQUAL 524288)
    set(ENV{TMPDIR} ${MEMORY_DIR})
    message(STATUS "databases in ${MEMORY_DIR}")
  else()
    message(STATUS "databases on the disk: ${MEMORY_DIR} has not 512 MiB free")
  endif()
endif()
string(REPLACE "," ";" wanted "${SCENARIOS}")
string(REPLACE "," ";" extra "${ARGS}")
execute_process(
  COMMAND ${BENCH} --seconds 3 --warmup 0.5 --concurrency 4 --scenarios ${wanted} --json ${JSON}
          ${extra}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exactly-bench exited with ${status}")
endif()
file(READ ${JSON} out)
if(PUT_WAIT)
  string(JSON mode GET "${out}" e2e_put_wait)
  if(NOT mode STREQUAL PUT_WAIT)
    message(FATAL_ERROR "e2e_put_wait is '${mode}', not ${PUT_WAIT}")
  endif()
endif()

string(JSON rows LENGTH "${out}" results)
set(seen "")
math(EXPR last "${rows} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${out}" results ${i} scenario)
  string(JSON ops GET "${out}" results ${i} ops_per_s)
  string(JSON errors GET "${out}" results ${i} errors)
  string(JSON fewest GET "${out}" results ${i} fewest_slot_ops)
  if(NOT ops GREATER 0 OR NOT errors EQUAL 0 OR NOT fewest GREATER 0)
    message(FATAL_ERROR "${name}: ${ops} ops/s, ${errors} errors, ${fewest} ops by one client")
  endif()
  if(WAL_SYNCS)
    string(JSON syncs GET "${out}" results ${i} postgres_wal_syncs)
    string(JSON sync_ms GET "${out}" results ${i} postgres_wal_sync_ms)
    # Each sync takes the injected delay at least: at least a millisecond on average.
    if(NOT syncs GREATER 0 OR sync_ms LESS syncs)
      message(FATAL_ERROR "${name}: ${syncs} WAL syncs of ${sync_ms} ms in the measured time")
    endif()
    message(STATUS "${name}: ${syncs} WAL syncs, ${sync_ms} ms")
  endif()
  if(MIN_P50_MS)
    string(JSON p50 GET "${out}" results ${i} p50_ms)
    if(p50 LESS MIN_P50_MS)
      message(FATAL_ERROR "${name}: p50 ${p50} ms, under ${MIN_P50_MS} ms")
    endif()
    message(STATUS "${name}: p50 ${p50} ms")
  endif()
  if(PHASES)
    set(timed "")
    if(name STREQUAL "wire")
      list(APPEND timed "mean_ms_per_request POST")
    elseif(name STREQUAL "e2e" OR name MATCHES "^outbox-")
      list(APPEND timed "client_mean_ms_per_request POST" "client_requests_per_op POST")
    endif()
    if(name MATCHES "^outbox-")
      list(APPEND timed "mean_ms_per_dispatcher_batch COMMIT" "messages_per_dispatcher_batch")
    endif()
    foreach(path IN LISTS timed)
      separate_arguments(path)
      string(JSON value ERROR_VARIABLE missing GET "${out}" results ${i} ${path})
      # Requests per operation above 1.5: many sent again (POSTs overtaking their PUTs: about 2).
      if(missing OR NOT value GREATER 0 OR (path MATCHES "per_op" AND value GREATER 1.5))
        message(FATAL_ERROR "${name}: ${path} '${value}' ${missing}")
      endif()
      message(STATUS "${name}: ${path} ${value}")
    endforeach()
  endif()
  if(SERVER_STORAGE)
    set(kinds flushed)
    if(name STREQUAL "wire" OR name STREQUAL "e2e" OR name STREQUAL "outbox-wire")
      list(APPEND kinds unflushed)
    endif()
    foreach(kind IN LISTS kinds)
      string(JSON answered ERROR_VARIABLE missing GET "${out}" results ${i}
             server_mean_ms_per_${kind}_request answered)
      string(JSON running ERROR_VARIABLE missing_too GET "${out}" results ${i}
             server_mean_ms_per_${kind}_request running)
      string(JSON size ERROR_VARIABLE missing_size GET "${out}" results ${i}
             server_requests_per_${kind}_group)
      # A request is answered no sooner than its own statements ran; a group holds one at least.
      if(missing OR missing_too OR missing_size OR NOT answered GREATER 0
         OR answered LESS running OR size LESS 1)
        message(FATAL_ERROR "${name}: server's ${kind} groups: answered '${answered}' ms, "
                            "running '${running}' ms, '${size}' a group ${missing}")
      endif()
      message(STATUS "${name}: server's ${kind} groups: answered ${answered} ms, ${size} a group")
    endforeach()
  endif()
  list(APPEND seen ${name})
endforeach()
foreach(name IN LISTS wanted)
  if(NOT name IN_LIST seen)
    message(FATAL_ERROR "no figures for ${name}")
  endif()
endforeach()

string(REPLACE "," ";" named "${RATIOS}")
foreach(ratio IN LISTS named)
  string(JSON value ERROR_VARIABLE missing GET "${out}" ratios ${ratio} 4)
  if(missing OR NOT value GREATER 0)
    message(FATAL_ERROR "ratio ${ratio}: '${value}' ${missing}")
  endif()
  message(STATUS "${ratio} = ${value}")
endforeach()
