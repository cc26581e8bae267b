# A short exactly-bench run whose JSON must hold, for every scenario asked for, a positive ops/s,
# no errors and no client that completed nothing, and a positive median for every ratio named.
#   cmake -DBENCH=<exactly-bench> -DJSON=<file> -DSCENARIOS=a,b -DRATIOS=x/y,... [-DARGS=--x,1]
#         [-DMEMORY_DIR=<tmpfs>] [-DWAL_SYNCS=ON] [-DMIN_P50_MS=N] -P <this>
# MEMORY_DIR: the databases go there (TMPDIR) when it has 512 MiB free, else on the disk.
# WAL_SYNCS (PostgreSQL on a slow disk): every scenario also counted PostgreSQL's WAL syncs, and
# their time, in its measured time.
# MIN_P50_MS: every scenario's median latency is at least this (a delay on the way).
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
