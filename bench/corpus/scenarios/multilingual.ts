/**
 * Non-Latin material shared by the scenario families: product searches,
 * research questions with retrieved passages, sentences with translations,
 * and the content-free replies users give ("ok") in each language.
 */

export const LANGUAGES = ['ja', 'zh', 'ko', 'ru', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];

export const LANGUAGE_NAMES: Record<Language, string> = {
  ja: 'Japanese',
  zh: 'Chinese',
  ko: 'Korean',
  ru: 'Russian',
  ar: 'Arabic',
};

/** Product searches a shopper types, five per language, all different products. */
export const PRODUCT_QUERIES: Record<Language, readonly string[]> = {
  ja: ['ワイヤレスイヤホン 防水', 'ノイズキャンセリング ヘッドホン', 'USB-C 充電器 65W', '電気ケトル 1.2L', 'ランニングシューズ 26.5cm'],
  zh: ['无线耳机 防水', '降噪头戴式耳机', '65W 快充充电器', '电热水壶 1.2升', '跑步鞋 42码'],
  ko: ['무선 이어폰 방수', '노이즈 캔슬링 헤드폰', 'USB-C 충전기 65W', '전기 주전자 1.2L', '러닝화 265mm'],
  ru: [
    'беспроводные наушники водонепроницаемые',
    'наушники с шумоподавлением',
    'зарядное устройство USB-C 65 Вт',
    'электрический чайник 1,2 л',
    'беговые кроссовки 42 размер',
  ],
  ar: ['سماعات لاسلكية مقاومة للماء', 'سماعات بخاصية إلغاء الضوضاء', 'شاحن USB-C بقدرة 65 واط', 'غلاية كهربائية 1.2 لتر', 'حذاء جري مقاس 42'],
};

/** English catalogue names for the product queries above, in the same order. */
export const PRODUCT_NAMES = ['Wireless Earbuds', 'Noise-Cancelling Headphones', 'USB-C Charger 65W', 'Electric Kettle', 'Running Shoes'] as const;

export interface ResearchQuestion {
  readonly question: string;
  /** Queries the agent might send; index 0 is the plain one. */
  readonly queries: readonly string[];
  /** Passages a retriever returns for them. */
  readonly passages: readonly string[];
}

/** Research questions in each language, with passages in the same language. */
export const RESEARCH_QUESTIONS: Record<Language, readonly ResearchQuestion[]> = {
  ja: [
    {
      question: '改正個人情報保護法で漏えい時の報告義務はどう変わったか',
      queries: ['個人情報保護法 改正 漏えい 報告義務', '個人情報 漏えい 個人情報保護委員会 報告 期限', '漏えい等報告 速報 確報 日数'],
      passages: [
        '2022年4月施行の改正法では、要配慮個人情報の漏えい等が発生した場合、個人情報保護委員会への報告と本人への通知が義務化された。',
        '速報は事態を知った時点から概ね3〜5日以内、確報は30日以内（不正アクセス等の場合は60日以内）に提出する。',
        '報告対象は、要配慮個人情報、財産的被害のおそれがあるもの、不正の目的によるもの、1,000人を超えるものの4類型である。',
        'ガイドラインでは、暗号化等の高度な保護措置が講じられている場合は報告対象外となると整理されている。',
      ],
    },
    {
      question: '日本の育児休業給付金の支給率は何パーセントか',
      queries: ['育児休業給付金 支給率', '育休 給付金 67% 50% 期間', '出生後休業支援給付金 2025'],
      passages: [
        '育児休業給付金は、休業開始から180日までは休業開始時賃金日額の67％、181日目以降は50％が支給される。',
        '2025年4月から出生後休業支援給付金が創設され、一定の条件を満たすと最大28日間13％が上乗せされる。',
        '支給には、休業開始前2年間に賃金支払基礎日数11日以上の月が12か月以上あることが必要である。',
      ],
    },
  ],
  zh: [
    {
      question: '中国个人信息出境需要满足哪些条件',
      queries: ['个人信息 出境 条件', '数据出境 安全评估 标准合同 认证', '个人信息出境 豁免 2024 规定'],
      passages: [
        '根据《个人信息保护法》第三十八条，个人信息处理者向境外提供个人信息，应当通过安全评估、认证或订立标准合同之一。',
        '2024年3月发布的《促进和规范数据跨境流动规定》明确，为订立、履行合同所必需的个人信息出境可免于申报。',
        '累计向境外提供10万人以上个人信息的，应当申报数据出境安全评估。',
      ],
    },
    {
      question: '上海新能源汽车牌照政策2024年有什么变化',
      queries: ['上海 新能源车 牌照 政策 2024', '上海 插电混动 绿牌 取消', '上海 新能源 专用牌照 申请条件'],
      passages: [
        '自2023年1月1日起，上海不再对插电式混合动力汽车发放新能源专用牌照额度。',
        '申请新能源汽车专用牌照，需在本市名下无新能源汽车，并满足社保或个税缴纳要求。',
        '纯电动汽车仍可申请免费专用牌照，但需符合充电条件确认要求。',
      ],
    },
  ],
  ko: [
    {
      question: '한국 연차유급휴가는 1년 미만 근로자에게 며칠 주어지나',
      queries: ['연차유급휴가 1년 미만 근로자', '근로기준법 제60조 연차 발생 기준', '1년 미만 근로자 월차 11일'],
      passages: [
        '근로기준법 제60조 제2항에 따라 계속 근로기간이 1년 미만인 근로자는 1개월 개근 시 1일의 유급휴가가 발생한다.',
        '1년 미만 기간 동안 최대 11일의 연차가 발생하며, 1년 근속 시 15일이 추가로 발생한다.',
        '사용자가 연차 사용 촉진 조치를 한 경우 미사용 연차에 대한 보상 의무가 면제될 수 있다.',
      ],
    },
    {
      question: '전세사기 피해자 지원 특별법의 지원 내용은',
      queries: ['전세사기 피해자 특별법 지원', '전세사기 피해자 우선매수권 경매 유예', '전세사기 특별법 개정 2024'],
      passages: [
        '전세사기피해자법은 피해자에게 경매·공매 유예, 우선매수권, 저리 대출 등의 지원을 규정한다.',
        '피해자로 결정되려면 임차보증금이 5억 원 이하이고 다수의 피해가 발생했거나 발생할 우려가 있어야 한다.',
        '2024년 개정으로 LH가 피해 주택을 경매로 매입해 공공임대로 제공하는 방안이 도입되었다.',
      ],
    },
  ],
  ru: [
    {
      question: 'Какие налоговые вычеты положены при покупке квартиры в России',
      queries: ['налоговый вычет покупка квартиры', 'имущественный вычет 2 млн ипотека 3 млн', 'вычет за квартиру сроки подачи 3-НДФЛ'],
      passages: [
        'Имущественный налоговый вычет при покупке жилья предоставляется в размере фактических расходов, но не более 2 млн рублей.',
        'Отдельно можно получить вычет по процентам по ипотеке — не более 3 млн рублей, если кредит получен после 2014 года.',
        'Декларацию 3-НДФЛ можно подать в течение трёх лет после года, в котором возникло право на вычет.',
      ],
    },
    {
      question: 'Как изменились правила маркировки молочной продукции',
      queries: ['маркировка молочной продукции Честный знак', 'маркировка молочка сроки 2024', 'Честный знак молочная продукция разрешительный режим'],
      passages: [
        'С 1 марта 2024 года на кассах вводится разрешительный режим для молочной продукции со сроком годности более 40 суток.',
        'Производители обязаны передавать сведения об объёме произведённой продукции в систему «Честный знак».',
        'Для продукции со сроком годности до 40 суток действует поэтапный порядок внедрения.',
      ],
    },
  ],
  ar: [
    {
      question: 'ما هي شروط الحصول على الإقامة الذهبية في الإمارات',
      queries: ['الإقامة الذهبية الإمارات شروط', 'الإقامة الذهبية للمستثمرين العقاريين 2 مليون درهم', 'الإقامة الذهبية للمواهب المتميزة'],
      passages: [
        'تمنح الإقامة الذهبية لمدة عشر سنوات للمستثمرين ورواد الأعمال والمواهب المتميزة والباحثين والطلبة المتفوقين.',
        'يشترط للمستثمر العقاري امتلاك عقار لا تقل قيمته عن مليوني درهم.',
        'يمكن لحامل الإقامة الذهبية كفالة أفراد أسرته دون حد أقصى لعمر الأبناء.',
      ],
    },
    {
      question: 'ما هي ضريبة القيمة المضافة في السعودية وكيف تحسب',
      queries: ['ضريبة القيمة المضافة السعودية نسبة', 'ضريبة القيمة المضافة 15% تاريخ التطبيق', 'التسجيل في ضريبة القيمة المضافة حد 375 ألف'],
      passages: [
        'تبلغ نسبة ضريبة القيمة المضافة في المملكة العربية السعودية 15% منذ يوليو 2020.',
        'يجب التسجيل إلزاميًا إذا تجاوزت قيمة التوريدات السنوية 375 ألف ريال.',
        'تعفى بعض الخدمات المالية والإيجار السكني من الضريبة.',
      ],
    },
  ],
};

export interface Sentence {
  readonly en: string;
  readonly translations: Record<Language, string>;
}

/** Sentences of a product manual, with their translations. */
export const SENTENCES: readonly Sentence[] = [
  {
    en: 'Charge the device fully before first use.',
    translations: {
      ja: '初めてご使用になる前に、本体を完全に充電してください。',
      zh: '首次使用前，请将设备充满电。',
      ko: '처음 사용하기 전에 기기를 완전히 충전하십시오.',
      ru: 'Перед первым использованием полностью зарядите устройство.',
      ar: 'اشحن الجهاز بالكامل قبل الاستخدام الأول.',
    },
  },
  {
    en: 'Press and hold the power button for three seconds to turn it on.',
    translations: {
      ja: '電源ボタンを3秒間長押しすると電源が入ります。',
      zh: '长按电源键三秒即可开机。',
      ko: '전원 버튼을 3초간 길게 누르면 전원이 켜집니다.',
      ru: 'Чтобы включить устройство, нажмите и удерживайте кнопку питания три секунды.',
      ar: 'اضغط مع الاستمرار على زر الطاقة لمدة ثلاث ثوانٍ لتشغيله.',
    },
  },
  {
    en: 'The indicator light turns blue when pairing is complete.',
    translations: {
      ja: 'ペアリングが完了すると、インジケーターが青く点灯します。',
      zh: '配对完成后，指示灯变为蓝色。',
      ko: '페어링이 완료되면 표시등이 파란색으로 바뀝니다.',
      ru: 'После завершения сопряжения индикатор загорается синим.',
      ar: 'يتحول مصباح المؤشر إلى اللون الأزرق عند اكتمال الاقتران.',
    },
  },
  {
    en: 'Do not expose the battery to temperatures above 45 degrees Celsius.',
    translations: {
      ja: 'バッテリーを45℃を超える温度にさらさないでください。',
      zh: '请勿将电池置于高于45摄氏度的环境中。',
      ko: '배터리를 섭씨 45도 이상의 온도에 노출하지 마십시오.',
      ru: 'Не подвергайте аккумулятор воздействию температур выше 45 °C.',
      ar: 'لا تعرّض البطارية لدرجات حرارة تزيد على 45 درجة مئوية.',
    },
  },
  {
    en: 'To reset the device, hold both volume buttons for ten seconds.',
    translations: {
      ja: 'リセットするには、両方の音量ボタンを10秒間押し続けてください。',
      zh: '如需重置设备，请同时按住两个音量键十秒钟。',
      ko: '기기를 초기화하려면 두 볼륨 버튼을 10초간 누르고 계십시오.',
      ru: 'Чтобы сбросить настройки, удерживайте обе кнопки громкости десять секунд.',
      ar: 'لإعادة ضبط الجهاز، اضغط على زري مستوى الصوت معًا لمدة عشر ثوانٍ.',
    },
  },
  {
    en: 'Clean the ear tips with a dry cloth; do not use alcohol.',
    translations: {
      ja: 'イヤーチップは乾いた布で拭いてください。アルコールは使用しないでください。',
      zh: '请用干布清洁耳塞套，切勿使用酒精。',
      ko: '이어팁은 마른 천으로 닦고 알코올은 사용하지 마십시오.',
      ru: 'Протирайте амбушюры сухой тканью; не используйте спирт.',
      ar: 'نظّف أطراف الأذن بقطعة قماش جافة، ولا تستخدم الكحول.',
    },
  },
  {
    en: 'The warranty does not cover damage caused by water immersion.',
    translations: {
      ja: '水没による損傷は保証の対象外です。',
      zh: '因浸水造成的损坏不在保修范围内。',
      ko: '침수로 인한 손상은 보증 대상이 아닙니다.',
      ru: 'Гарантия не распространяется на повреждения от погружения в воду.',
      ar: 'لا يغطي الضمان الأضرار الناتجة عن الغمر في الماء.',
    },
  },
  {
    en: 'Firmware updates are installed automatically while the case is charging.',
    translations: {
      ja: 'ファームウェアの更新は、ケースの充電中に自動的にインストールされます。',
      zh: '充电盒充电时会自动安装固件更新。',
      ko: '케이스를 충전하는 동안 펌웨어 업데이트가 자동으로 설치됩니다.',
      ru: 'Обновления прошивки устанавливаются автоматически во время зарядки кейса.',
      ar: 'تُثبَّت تحديثات البرامج الثابتة تلقائيًا أثناء شحن العلبة.',
    },
  },
];

/** Replies that carry no information, per language. */
export const EMPTY_REPLIES: Record<Language | 'en', readonly string[]> = {
  en: ['ok', 'go on', 'sure', 'continue', 'ok, keep going', 'yes', 'k', 'please continue', '👍', 'alright'],
  ja: ['はい', 'お願いします', '続けてください', 'わかりました'],
  zh: ['好的', '继续', '嗯', '请继续'],
  ko: ['네', '계속해 주세요', '알겠습니다', '좋아요'],
  ru: ['ок', 'продолжайте', 'да', 'хорошо'],
  ar: ['حسنًا', 'استمر', 'نعم', 'تمام'],
};

/** Customer names per language (family name first where customary). */
export const CUSTOMER_NAMES: Record<Language, readonly { native: string; first: string; last: string }[]> = {
  ja: [
    { native: '佐藤 健', first: 'Ken', last: 'Sato' },
    { native: '田中 美咲', first: 'Misaki', last: 'Tanaka' },
    { native: '鈴木 大輔', first: 'Daisuke', last: 'Suzuki' },
  ],
  zh: [
    { native: '王 芳', first: 'Fang', last: 'Wang' },
    { native: '李 伟', first: 'Wei', last: 'Li' },
    { native: '陈 静', first: 'Jing', last: 'Chen' },
  ],
  ko: [
    { native: '김 민준', first: 'Minjun', last: 'Kim' },
    { native: '이 서연', first: 'Seoyeon', last: 'Lee' },
    { native: '박 지훈', first: 'Jihoon', last: 'Park' },
  ],
  ru: [
    { native: 'Иван Петров', first: 'Ivan', last: 'Petrov' },
    { native: 'Анна Смирнова', first: 'Anna', last: 'Smirnova' },
    { native: 'Дмитрий Волков', first: 'Dmitry', last: 'Volkov' },
  ],
  ar: [
    { native: 'أحمد الحربي', first: 'Ahmed', last: 'Alharbi' },
    { native: 'فاطمة الزهراني', first: 'Fatima', last: 'Alzahrani' },
    { native: 'يوسف القحطاني', first: 'Yousef', last: 'Alqahtani' },
  ],
};
