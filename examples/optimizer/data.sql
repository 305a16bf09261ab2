-- Deterministic data for schema.sql: every value is a function of the row number through
-- hashint8extended (seeded, stable across server versions), so every load is identical and no
-- CSV is committed. The columns are skewed and correlated on purpose, within and across tables:
--   * kind decides production_year's range (episodes are all recent, shorts are mostly old);
--   * a series ('tv series', kind 2) is made by Japanese companies and tagged 'anime' far more
--     often than anything else, so kind, company country and keyword go together across joins;
--   * cast_info has a few hub people (ids 1..10) in a large share of the rows, and a Zipf-like
--     tail; role follows gender;
--   * movie_keyword's keywords are Zipf-like, with the popular ones tied to kind.
-- The planner multiplies selectivities as if columns were independent: it misestimates all of
-- these (queries/*.sql).

create or replace function pgrig_u(i bigint, salt bigint) returns double precision
    language sql immutable parallel safe
    as 'select (hashint8extended(i, salt) & 2147483647)::double precision / 2147483648.0';

insert into kind_type values
    (1, 'movie'), (2, 'tv series'), (3, 'episode'), (4, 'video game'), (5, 'short');

-- 20,000 titles: half movies, a quarter episodes
insert into title (id, title, kind_id, production_year, series_years)
select i, 'title ' || i, k,
       case k
           when 1 then 1930 + floor(sqrt(pgrig_u(i, 2)) * 90)::int
           when 2 then 1990 + floor(pgrig_u(i, 2) * 33)::int
           when 3 then 2005 + floor(pgrig_u(i, 2) * 18)::int
           when 4 then 1995 + floor(pgrig_u(i, 2) * 28)::int
           else 1920 + floor(pgrig_u(i, 2) ^ 2 * 100)::int
       end,
       case when k in (2, 3) then '2000-????' end
from (select i,
             case when u < 0.50 then 1 when u < 0.65 then 2 when u < 0.90 then 3
                  when u < 0.95 then 4 else 5 end as k
      from (select i, pgrig_u(i, 1) as u from generate_series(1, 20000) i) s) t;

-- 10,000 people
insert into person (id, name, gender)
select i, 'person ' || i, case when pgrig_u(i, 3) < 0.6 then 'm' else 'f' end
from generate_series(1, 10000) i;

-- 1,000 companies in blocks by country: 1-400 us, 401-550 gb, 551-700 jp, 701-800 de, rest fr
insert into company (id, name, country_code)
select i, 'company ' || i,
       case when i <= 400 then '[us]' when i <= 550 then '[gb]' when i <= 700 then '[jp]'
            when i <= 800 then '[de]' else '[fr]' end
from generate_series(1, 1000) i;

-- 200 keywords; the first few are the popular ones
insert into keyword (id, keyword)
select i, case i when 1 then 'anime' when 2 then 'sequel' when 3 then 'based-on-novel'
                 when 4 then 'murder' when 5 then 'character-name-in-title'
                 else 'keyword-' || i end
from generate_series(1, 200) i;

-- two companies per title: series mostly from Japanese companies, movies mostly American
insert into movie_companies (id, movie_id, company_id, company_type)
select row_number() over (order by t.id, n), t.id,
       case
           when t.kind_id = 2 and pgrig_u(t.id * 2 + n, 4) < 0.85 then 551 + floor(pgrig_u(t.id * 2 + n, 5) * 150)::int
           when t.kind_id = 1 and pgrig_u(t.id * 2 + n, 4) < 0.70 then 1 + floor(pgrig_u(t.id * 2 + n, 5) * 400)::int
           else 1 + floor(pgrig_u(t.id * 2 + n, 5) * 1000)::int
       end,
       case n when 0 then 'production companies' else 'distributors' end
from title t cross join generate_series(0, 1) n;

-- three keywords per title: series tagged 'anime', recent movies 'sequel', else Zipf-like
insert into movie_keyword (id, movie_id, keyword_id)
select row_number() over (order by t.id, n), t.id,
       case
           when n = 0 and t.kind_id = 2 and pgrig_u(t.id, 6) < 0.80 then 1
           when n = 0 and t.kind_id = 1 and t.production_year >= 2005 and pgrig_u(t.id, 6) < 0.50 then 2
           when n = 1 and t.kind_id = 5 then 4
           else 1 + floor(200 * pgrig_u(t.id * 3 + n, 7) ^ 3)::int
       end
from title t cross join generate_series(0, 2) n;

-- four to eight cast rows per title: one in ten goes to a hub person (1..10), the rest Zipf-like;
-- the role follows the person's gender
insert into cast_info (id, person_id, movie_id, role, note)
select row_number() over (order by c.movie_id, c.n), c.person_id, c.movie_id,
       case when p.gender = 'f' then (case when pgrig_u(c.movie_id * 8 + c.n, 10) < 0.9 then 'actress' else 'producer' end)
            else (case when pgrig_u(c.movie_id * 8 + c.n, 10) < 0.8 then 'actor' else 'director' end) end,
       case when c.n = 0 then '(voice)' end
from (select t.id as movie_id, n,
             case when pgrig_u(t.id * 8 + n, 8) < 0.10 then 1 + floor(pgrig_u(t.id * 8 + n, 9) * 10)::int
                  else 1 + floor(10000 * pgrig_u(t.id * 8 + n, 9) ^ 4)::int end as person_id
      from title t
      cross join generate_series(0, 7) n
      where n < 4 + floor(pgrig_u(t.id, 11) * 5)::int) c
join person p on p.id = c.person_id;

drop function pgrig_u(bigint, bigint);
