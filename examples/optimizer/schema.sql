-- A small JOB-like schema (project-written; the shape of the IMDB tables the Join Order
-- Benchmark uses, not its text): movies, people, companies and keywords, with the many-to-many
-- link tables the join queries walk. Keys only; data.sql fills it, indexes.sql indexes it.
drop table if exists movie_keyword, movie_companies, cast_info, keyword, company, person, title, kind_type cascade;

create table kind_type (
    id    integer primary key,
    kind  text not null
);

create table title (
    id               integer primary key,
    title            text not null,
    kind_id          integer not null references kind_type (id),
    production_year  integer,
    series_years     text
);

create table person (
    id      integer primary key,
    name    text not null,
    gender  char(1)
);

create table company (
    id            integer primary key,
    name          text not null,
    country_code  text not null
);

create table keyword (
    id       integer primary key,
    keyword  text not null
);

create table cast_info (
    id         integer primary key,
    person_id  integer not null references person (id),
    movie_id   integer not null references title (id),
    role       text not null,
    note       text
);

create table movie_companies (
    id            integer primary key,
    movie_id      integer not null references title (id),
    company_id    integer not null references company (id),
    company_type  text not null
);

create table movie_keyword (
    id          integer primary key,
    movie_id    integer not null references title (id),
    keyword_id  integer not null references keyword (id)
);
