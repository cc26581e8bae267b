# A short exactly-bench --long-run whose JSON must hold samples, no errors, and a growth figure
# for each quantity sampled; on PostgreSQL also each relation's, autovacuum's passes read at every
# sample and dated, each index's free and deleted pages read at every sample and reported by
# tenth, and autovacuum's passes read from the cluster's log with a bound for each index.
#   cmake -DBENCH=<exactly-bench> -DJSON=<file> [-DENGINE=postgres] -P <this>
cmake_minimum_required(VERSION 3.22)
set(engine_args "")
if(ENGINE STREQUAL "postgres")
  # Autovacuum every second, so that the run's log holds its passes.
  set(engine_args --engine postgres --postgres-setting autovacuum_naptime=1s)
endif()
execute_process(
  COMMAND ${BENCH} ${engine_args} --long-run 3000 --long-run-rate 500 --concurrency 4
          --sample-seconds 0.5 --json ${JSON}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exactly-bench --long-run exited with ${status}")
endif()
file(READ ${JSON} out)

string(JSON errors GET "${out}" long_run errors)
string(JSON samples LENGTH "${out}" long_run samples)
if(NOT errors EQUAL 0 OR samples LESS 3)
  message(FATAL_ERROR "long run: ${errors} errors, ${samples} samples")
endif()
set(keys server_rss_kib client_rss_kib server_db_bytes server_rows)
if(ENGINE STREQUAL "postgres")
  list(APPEND keys postgres_backends_kib)
endif()
foreach(key IN LISTS keys)
  string(JSON growth ERROR_VARIABLE missing GET "${out}" long_run growth ${key})
  if(missing)
    message(FATAL_ERROR "no growth figure for ${key}: ${missing}")
  endif()
  message(STATUS "${key}: ${growth}")
endforeach()
if(ENGINE STREQUAL "postgres")
  string(JSON relations ERROR_VARIABLE missing LENGTH "${out}" long_run postgres_relations growth)
  if(missing OR relations LESS 2)
    message(FATAL_ERROR "relations read apart: '${relations}' ${missing}")
  endif()
  string(JSON passes ERROR_VARIABLE missing TYPE "${out}" long_run postgres_vacuum pass_seconds)
  if(missing OR NOT passes STREQUAL "ARRAY")
    message(FATAL_ERROR "no dated autovacuum passes: ${missing}")
  endif()
  string(JSON dated ERROR_VARIABLE missing LENGTH "${out}" long_run postgres_vacuum
         growth_after_first_tenth)
  if(missing OR NOT dated EQUAL relations)
    message(FATAL_ERROR "growths dated for '${dated}' of ${relations} relations ${missing}")
  endif()
  # Every index (each relation but the table) reported by tenth.
  string(JSON indexes ERROR_VARIABLE missing LENGTH "${out}" long_run postgres_index_pages)
  math(EXPR expected "${relations} - 1")
  if(missing OR NOT indexes EQUAL expected)
    message(FATAL_ERROR "index pages for '${indexes}' of ${expected} indexes ${missing}")
  endif()
  math(EXPR last_index "${indexes} - 1")
  foreach(i RANGE ${last_index})
    string(JSON index MEMBER "${out}" long_run postgres_index_pages ${i})
    string(JSON tenths LENGTH "${out}" long_run postgres_index_pages ${index} taken_max_by_tenth)
    math(EXPR last_tenth "${tenths} - 1")
    string(JSON taken GET "${out}" long_run postgres_index_pages ${index} taken_max_by_tenth
           ${last_tenth})
    if(tenths LESS 3 OR taken LESS 1)
      message(FATAL_ERROR "${index}: ${tenths} tenths, the last took ${taken} pages")
    endif()
  endforeach()
  # Autovacuum's passes read from the cluster's log, and a bound for each index they name.
  string(JSON logged ERROR_VARIABLE missing LENGTH "${out}" long_run postgres_vacuum_log)
  if(missing OR logged LESS 1)
    message(FATAL_ERROR "no index in autovacuum's logged passes: '${logged}' ${missing}")
  endif()
  string(JSON index MEMBER "${out}" long_run postgres_vacuum_log 0)
  string(JSON passes GET "${out}" long_run postgres_vacuum_log ${index} passes)
  string(JSON bound ERROR_VARIABLE missing GET "${out}" long_run postgres_vacuum_log ${index}
         bound_pages)
  if(missing OR passes LESS 1 OR bound LESS 2)
    message(FATAL_ERROR "${index}: ${passes} passes, bound '${bound}' ${missing}")
  endif()
  # Every sample read autovacuum's count (-1: a failed reading) and each index's free and deleted
  # pages.
  math(EXPR last "${samples} - 1")
  foreach(i RANGE ${last})
    string(JSON count GET "${out}" long_run samples ${i} postgres_vacuum_passes)
    if(count LESS 0)
      message(FATAL_ERROR "sample ${i} did not read autovacuum's passes")
    endif()
    string(JSON read ERROR_VARIABLE missing LENGTH "${out}" long_run samples ${i}
           postgres_index_pages)
    if(missing OR NOT read EQUAL indexes)
      message(FATAL_ERROR "sample ${i} read the pages of '${read}' of ${indexes} indexes")
    endif()
  endforeach()
endif()
